import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sandboxKeys } from "./sandboxes";
import { templateKeys, templateQueries } from "./templates";
import { sandboxesByTemplate, templatePageQueries } from "./template-pages";
import type { Sandbox } from "../orkestr/schemas/sandboxes";
import { fileKeys } from "./files";
import { previewKeys } from "./previews";
import { terminalKeys } from "./terminal";

// One key per question, and prefix invalidation that reaches every query under a resource: the
// create form's source picker and the list page's template filter once cached the same templates
// under two keys (["create-options","templates"] and ["templates","list",…]), so refreshing one left
// the other stale.

afterEach(() => vi.unstubAllGlobals());

function countFetches() {
  const urls: string[] = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string) => {
      urls.push(url);
      return new Response(JSON.stringify([{ id: `t${urls.length}`, status: "ready" }]), {
        headers: { "content-type": "application/json" },
      });
    }),
  );
  return urls;
}

/** A mounted useQuery, without React: an observer that stays subscribed. */
function mount(client: QueryClient, options: ReturnType<typeof templateQueries.list>) {
  const observer = new QueryObserver(client, options);
  const unsubscribe = observer.subscribe(() => {});
  return { observer, unsubscribe };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe("template queries", () => {
  it("the create form and the list filter share one cache entry: one request serves both", async () => {
    const urls = countFetches();
    const client = new QueryClient();
    const createForm = mount(client, templateQueries.list({ include_builtin: true }));
    const listFilter = mount(client, templateQueries.list({ include_builtin: true }));
    await settle();
    expect(urls).toEqual(["/api/v1/templates?include_builtin=true&limit=100"]);
    expect(createForm.observer.getCurrentResult().data).toEqual(listFilter.observer.getCurrentResult().data);
    createForm.unsubscribe();
    listFilter.unsubscribe();
  });

  it("invalidating the templates prefix refetches every template query, fresh data for both users", async () => {
    const urls = countFetches();
    const client = new QueryClient();
    const withBuiltins = mount(client, templateQueries.list({ include_builtin: true }));
    const customOnly = mount(client, templateQueries.list({ include_builtin: false }));
    await settle();
    expect(urls).toHaveLength(2);
    await client.invalidateQueries({ queryKey: templateKeys.all });
    await settle();
    expect(urls).toHaveLength(4);
    expect(withBuiltins.observer.getCurrentResult().isStale).toBe(false);
    expect(customOnly.observer.getCurrentResult().data?.[0]?.id).toMatch(/^t[34]$/);
    withBuiltins.unsubscribe();
    customOnly.unsubscribe();
  });
});

describe("the templates pages' queries", () => {
  it("who uses a template: the live sandboxes, by the list's template filter; all of them for the list page", async () => {
    const urls = countFetches();
    const client = new QueryClient();
    const one = mount(client, templatePageQueries.users("tmpl_1") as never);
    const all = mount(client, templatePageQueries.users(null) as never);
    await settle();
    expect(urls.sort()).toEqual([
      "/api/v1/sandboxes?status=creating%2Crunning%2Cpausing%2Cpaused%2Cresuming&limit=100",
      "/api/v1/sandboxes?status=creating%2Crunning%2Cpausing%2Cpaused%2Cresuming&template=tmpl_1&limit=100",
    ]);
    // Under the templates prefix: a delete's invalidation refreshes them.
    expect(templateKeys.users("tmpl_1").slice(0, 1)).toEqual([...templateKeys.all]);
    one.unsubscribe();
    all.unsubscribe();
  });

  it("groups sandboxes by the template id they run; built-ins and unknowns stay apart", () => {
    const s = (id: string, template: string | null) => ({ id, status: "running", template }) as unknown as Sandbox;
    const by = sandboxesByTemplate([s("a", "tmpl_1"), s("b", "python-3.12"), s("c", "tmpl_1"), s("d", null)]);
    expect(by.get("tmpl_1")?.map((x) => x.id)).toEqual(["a", "c"]);
    expect(by.get("python-3.12")?.map((x) => x.id)).toEqual(["b"]);
    expect([...by.keys()]).toHaveLength(2);
  });
});

describe("key factories", () => {
  it("every sandbox-scoped key starts with the sandboxes prefix, so one invalidation reaches them all", () => {
    const keys = [
      sandboxKeys.lists(),
      sandboxKeys.detail("s"),
      sandboxKeys.metrics("s"),
      fileKeys.dir("s", "/"),
      previewKeys.scan("s"),
      terminalKeys.sessions("s"),
    ];
    for (const k of keys) expect(k.slice(0, 1)).toEqual([...sandboxKeys.all]);
  });

  it("keys of one resource nest: list under lists under all", () => {
    expect(templateKeys.list({ include_builtin: true }).slice(0, 2)).toEqual([...templateKeys.lists()]);
    expect(templateKeys.lists().slice(0, 1)).toEqual([...templateKeys.all]);
  });
});

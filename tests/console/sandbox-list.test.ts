import { describe, expect, it } from "vitest";
import { appliesTo, runBulk } from "../../components/sandboxes/list/bulk";
import { IDLE_WINDOW_MS, isIdle } from "../../components/sandboxes/list/idle";
import {
  isFiltered,
  listStateToSearch,
  parseListState,
  parseMetadataFilter,
  serverFilters,
} from "../../components/sandboxes/list/list-state";
import { currentSandboxId } from "../../components/command-palette/command-palette";
import { OrkestrError } from "../../lib/orkestr/errors";
import { buildQuery } from "../../lib/orkestr/path";
import { listApiQuery, listRefreshIntervalMs } from "../../lib/queries/sandbox-list";
import { ProxyListSandboxesQuery } from "../../lib/validations/proxy";

describe("list state in the URL", () => {
  it("round-trips every filter, metadata in its metadata[k]=v form", () => {
    const search =
      "?status=running%2Cpaused&template=python-3.12&region=hel1&metadata%5Bagent_run%5D=r_1&metadata%5Bteam%5D=a%3Db&creator=usr_1&q=sbx_01&cursor=sbx_X";
    const state = parseListState(new URLSearchParams(search));
    expect(state).toEqual({
      status: ["running", "paused"],
      template: "python-3.12",
      region: "hel1",
      metadata: [
        ["agent_run", "r_1"],
        ["team", "a=b"],
      ],
      creator: "usr_1",
      q: "sbx_01",
      cursor: "sbx_X",
    });
    expect(parseListState(new URLSearchParams(listStateToSearch(state)))).toEqual(state);
  });

  it("the default view is the empty query string and is not filtered", () => {
    const state = parseListState(new URLSearchParams(""));
    expect(listStateToSearch(state)).toBe("");
    expect(isFiltered(state)).toBe(false);
  });

  it("sends the server filters to the API, never the id search", () => {
    const state = parseListState(new URLSearchParams("?status=paused&metadata[env]=prod&q=abc"));
    const qs = new URLSearchParams(buildQuery(listApiQuery(serverFilters(state), "sbx_C", 100)));
    expect(Object.fromEntries(qs)).toEqual({
      limit: "100",
      status: "paused",
      "metadata[env]": "prod",
      cursor: "sbx_C",
    });
  });

  it("?creator= filters on the creator stamp server-side (metadata[baton.user]), over a typed baton.user filter", () => {
    const state = parseListState(
      new URLSearchParams("?creator=usr_ana&metadata[baton.user]=usr_bob&metadata[env]=prod"),
    );
    expect(isFiltered(state)).toBe(true);
    const qs = new URLSearchParams(buildQuery(listApiQuery(serverFilters(state), "sbx_C", 50)));
    expect(qs.getAll("metadata[baton.user]")).toEqual(["usr_ana"]);
    expect(qs.get("metadata[env]")).toBe("prod");
    // Through Baton's own list route, the same filter reaches the orkestr client as metadata.
    const parsed = ProxyListSandboxesQuery.parse(Object.fromEntries(qs));
    expect(parsed.metadata).toEqual({ env: "prod", "baton.user": "usr_ana" });
    // Removing the chip removes the parameter and the filter.
    expect(listStateToSearch({ ...state, creator: "" })).not.toContain("creator");
  });

  it("reads key=value metadata filters, values may contain '='", () => {
    expect(parseMetadataFilter(" agent_run = r_1 ")).toEqual(["agent_run", "r_1"]);
    expect(parseMetadataFilter("a=b=c")).toEqual(["a", "b=c"]);
    expect(parseMetadataFilter("=x")).toBeNull();
    expect(parseMetadataFilter("novalue")).toBeNull();
  });

  it("refreshes less often the more pages are loaded", () => {
    expect(listRefreshIntervalMs(1)).toBe(5_000);
    expect(listRefreshIntervalMs(100)).toBe(false);
  });
});

describe("the proxy's list query", () => {
  it("gathers metadata[k]=v parameters for the client", () => {
    const q = ProxyListSandboxesQuery.parse({
      limit: "10",
      status: "running",
      "metadata[agent_run]": "r_1",
      "metadata[a]b]": "x",
      other: "ignored",
    });
    expect(q).toEqual({
      limit: 10,
      cursor: undefined,
      status: "running",
      template: undefined,
      region: undefined,
      metadata: { agent_run: "r_1", "a]b": "x" },
    });
  });

  it("passes the snapshot filter on (the fork tree's children)", () => {
    expect(ProxyListSandboxesQuery.parse({ snapshot: "snap_1" })).toMatchObject({ snapshot: "snap_1" });
    expect(ProxyListSandboxesQuery.safeParse({ snapshot: "x".repeat(129) }).success).toBe(false);
  });

  it("refuses a metadata key given twice", () => {
    expect(ProxyListSandboxesQuery.safeParse({ "metadata[k]": ["a", "b"] }).success).toBe(false);
  });

  it("leaves metadata out when there is none", () => {
    expect(ProxyListSandboxesQuery.parse({})).not.toHaveProperty("metadata");
  });
});

describe("idle flag", () => {
  const now = 1_700_000_000_000;
  const quiet = Array.from({ length: 601 }, (_, i) => ({ t: now - IDLE_WINDOW_MS + i * 1000, cpu: 0.4 }));

  it("flags a running sandbox with quiet CPU and no recent exec", () => {
    expect(isIdle({ status: "running", samples: quiet, lastExecAt: null, now })).toBe(true);
    expect(isIdle({ status: "running", samples: quiet, lastExecAt: now - IDLE_WINDOW_MS - 1, now })).toBe(true);
  });

  it("does not flag when anything is unknown or busy", () => {
    expect(isIdle({ status: "paused", samples: quiet, lastExecAt: null, now })).toBe(false);
    expect(isIdle({ status: "running", samples: quiet, lastExecAt: undefined, now })).toBe(false);
    expect(isIdle({ status: "running", samples: quiet, lastExecAt: now - 60_000, now })).toBe(false);
    expect(isIdle({ status: "running", samples: quiet.slice(300), lastExecAt: null, now })).toBe(false); // only 5 minutes seen
    const spike = quiet.map((s, i) => (i === 400 ? { ...s, cpu: 35 } : s));
    expect(isIdle({ status: "running", samples: spike, lastExecAt: null, now })).toBe(false);
  });
});

describe("bulk actions", () => {
  it("apply only where they make sense", () => {
    expect(appliesTo("pause", "running")).toBe(true);
    expect(appliesTo("pause", "paused")).toBe(false);
    expect(appliesTo("resume", "paused")).toBe(true);
    expect(appliesTo("terminate", "paused")).toBe(true);
    expect(appliesTo("terminate", "terminated")).toBe(false);
  });

  it("collect a result per id, in order, with at most `limit` at once", async () => {
    let running = 0;
    let peak = 0;
    const results = await runBulk(
      ["a", "b", "c", "d", "e"],
      async (id) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (id === "c") throw new OrkestrError({ status: 409, code: "conflict", detail: "The sandbox is busy" });
      },
      2,
    );
    expect(peak).toBe(2);
    expect(results).toEqual([
      { id: "a", ok: true },
      { id: "b", ok: true },
      { id: "c", ok: false, detail: "The sandbox is busy" },
      { id: "d", ok: true },
      { id: "e", ok: true },
    ]);
  });
});

describe("command palette", () => {
  it("knows the sandbox whose page is open", () => {
    expect(currentSandboxId("/sandboxes/sbx_01ABC")).toBe("sbx_01ABC");
    expect(currentSandboxId("/sandboxes/sbx_01ABC/files")).toBe("sbx_01ABC");
    expect(currentSandboxId("/sandboxes/new")).toBeNull();
    expect(currentSandboxId("/sandboxes")).toBeNull();
  });
});

import "server-only";
import { isValidElement, type ReactElement, type ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { testBackends } from "../../lib/server/db/test-backends";
import { upsertConnection } from "../../lib/server/db/connections";
import { makeUser, sessionCookie, useConsoleDb } from "../console/helpers";

// The webhooks pages check the permission their API checks (webhooks.read), offer writes only to a
// role with webhooks.write, and hand the acting team's connection (its base URL, for the snippets,
// never its token) to the page only once allowed. The server components are called as Next calls them; their client leaves are not
// rendered, only looked at as the elements the page hands them.

const request = vi.hoisted(() => ({ cookie: "" }));
vi.mock("next/headers", () => ({
  headers: async () => new Headers({ host: "baton.test", cookie: request.cookie }),
  cookies: async () => ({
    getAll: () =>
      request.cookie
        .split(";")
        .filter(Boolean)
        .map((pair) => ({ name: pair.split("=")[0]!.trim(), value: pair.slice(pair.indexOf("=") + 1).trim() })),
  }),
}));
vi.mock("next/navigation", () => ({
  redirect: (to: string) => {
    throw new Error(`redirect ${to}`);
  },
  notFound: () => {
    throw new Error("not found");
  },
}));
const { default: WebhooksPage } = await import("../../app/(console)/webhooks/page");
const { default: WebhookPage } = await import("../../app/(console)/webhooks/[id]/page");
const { CreateWebhookButton } = await import("../../components/webhooks/create-webhook");
const { WebhookList } = await import("../../components/webhooks/webhook-list");
const { WebhookDetail } = await import("../../components/webhooks/webhook-detail");
const { Forbidden } = await import("../../components/layout/forbidden");
const { NoConnection } = await import("../../app/(console)/webhooks/no-connection");

/** Every element in the tree as the page returned it (function components are not called). */
function elements(node: ReactNode): ReactElement[] {
  if (Array.isArray(node)) return node.flatMap(elements);
  if (!isValidElement(node)) return [];
  const props = node.props as Record<string, unknown>;
  return [node, ...Object.values(props).flatMap((v) => elements(v as ReactNode))];
}
const find = (node: ReactNode, type: unknown) => elements(node).filter((e) => e.type === type);

describe.each(testBackends)("the webhooks pages and permissions on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  afterEach(() => {
    request.cookie = "";
  });
  /** A user with `role` in a team (none: no team), with a connection of that team unless `connected` is false. */
  async function signInAs(role: "viewer" | "member" | null, { connected = true } = {}) {
    const { user, teamId } = await makeUser(ctx.db(), role);
    if (connected)
      await upsertConnection(ctx.db(), {
        userId: user.id,
        teamId,
        name: "c",
        baseUrl: "https://orkestr.internal.example",
        token: "ork_abcdefghijkl",
      });
    request.cookie = (await sessionCookie(ctx.db(), user.id)).cookie;
  }

  it("without webhooks.read: a forbidden page on both, and nothing of the connection", async () => {
    await signInAs(null);
    for (const page of [await WebhooksPage(), await WebhookPage({ params: Promise.resolve({ id: "wh_1" }) })]) {
      expect(find(page, Forbidden)).toHaveLength(1);
      expect((find(page, Forbidden)[0]!.props as { detail: string }).detail).toContain("(webhooks.read)");
      expect(find(page, WebhookList).length + find(page, WebhookDetail).length).toBe(0);
      expect(JSON.stringify(elements(page).map((e) => e.props))).not.toContain("orkestr.internal.example");
    }
  });

  it("a viewer sees the list and a webhook, with no way to create or change one", async () => {
    await signInAs("viewer");
    const list = await WebhooksPage();
    expect(find(list, WebhookList)).toHaveLength(1);
    expect(find(list, CreateWebhookButton)).toHaveLength(0);
    const detail = await WebhookPage({ params: Promise.resolve({ id: "wh_1" }) });
    expect(find(detail, WebhookDetail)[0]!.props).toMatchObject({ id: "wh_1", canWrite: false });
  });

  it("a member can create and change webhooks; the snippets get the connection's base URL, never its token", async () => {
    await signInAs("member");
    const list = await WebhooksPage();
    expect(find(list, CreateWebhookButton)[0]!.props).toEqual({ baseUrl: "https://orkestr.internal.example" });
    const detail = await WebhookPage({ params: Promise.resolve({ id: "wh%2F1" }) });
    expect(find(detail, WebhookDetail)[0]!.props).toEqual({
      id: "wh/1",
      baseUrl: "https://orkestr.internal.example",
      canWrite: true,
    });
  });

  it("without a connection: says where to add one instead of listing", async () => {
    await signInAs("member", { connected: false });
    const list = await WebhooksPage();
    expect(find(list, NoConnection)).toHaveLength(1);
    expect(find(list, WebhookList)).toHaveLength(0);
    expect(find(list, CreateWebhookButton)).toHaveLength(0);
    expect(find(await WebhookPage({ params: Promise.resolve({ id: "wh_1" }) }), NoConnection)).toHaveLength(1);
  });
});

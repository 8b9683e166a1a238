import "server-only";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isValidElement, type ReactElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import { upsertConnection } from "../../lib/server/db/connections";
import { testBackends } from "../../lib/server/db/test-backends";
import { makeUser, sessionCookie, useConsoleDb } from "./helpers";

// Pages must apply the permission their API applies (route({ perm })): a role without it gets a
// forbidden page, and nothing is read for it. The real server components are called as Next calls
// them, with Next's request context (cookies, headers) and the upstream replaced.

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
const SECRET_SANDBOX = { id: "sbx_secret", name: "payroll-db", status: "running" } as unknown as Sandbox;
const upstream = vi.hoisted(() => ({ calls: 0 }));
vi.mock("../../lib/server/upstream", () => ({
  withUpstream: async () => {
    upstream.calls++;
    return SECRET_SANDBOX;
  },
}));

const { default: SandboxLayout } = await import("../../app/(console)/sandboxes/[id]/layout");
const { default: SandboxesPage } = await import("../../app/(console)/sandboxes/page");
const { default: NewSandboxPage } = await import("../../app/(console)/sandboxes/new/page");
const { default: LimitsPage } = await import("../../app/(console)/limits/page");
const { default: VolumesPage } = await import("../../app/(console)/volumes/page");
const { VolumesView } = await import("../../components/volumes/volumes-view");

const markup = (node: unknown) => renderToStaticMarkup(node as ReactElement);

describe.each(testBackends)("console pages check their API's permission on $name", (backend) => {
  const ctx = useConsoleDb(backend);
  beforeEach(() => {
    upstream.calls = 0;
  });
  afterEach(() => {
    request.cookie = "";
  });

  /** A user with `role` in a team (none: no team), with a connection of that team the pages may read through. */
  async function signInAs(role: "viewer" | "member" | null) {
    const { user, teamId } = await makeUser(ctx.db(), role);
    await upsertConnection(ctx.db(), {
      userId: user.id,
      teamId,
      name: "Secret connection",
      baseUrl: "https://orkestr.internal.example",
      token: "ork_abcdefghijkl",
    });
    request.cookie = (await sessionCookie(ctx.db(), user.id)).cookie;
  }

  it("the sandbox detail page: without sandboxes.read, a forbidden page and no upstream read", async () => {
    await signInAs(null); // no team, so no role: sandboxes.read is not granted
    const page = await SandboxLayout({ children: "tab", params: Promise.resolve({ id: "sbx_secret" }) });
    expect(upstream.calls).toBe(0);
    const html = markup(page);
    expect(html).toContain("You do not have access to this page");
    expect(html).toContain("(sandboxes.read)");
    expect(html).not.toContain("payroll-db");
  });

  it("the sandbox detail page: a viewer (sandboxes.read) gets the sandbox", async () => {
    await signInAs("viewer");
    const page = await SandboxLayout({ children: "tab", params: Promise.resolve({ id: "sbx_secret" }) });
    expect(upstream.calls).toBe(1);
    expect(isValidElement(page) && (page.props as { initial?: unknown }).initial).toBe(SECRET_SANDBOX);
  });

  it("the sandbox list: without sandboxes.read, a forbidden page and no connection read", async () => {
    await signInAs(null);
    const html = markup(await SandboxesPage());
    expect(upstream.calls).toBe(0);
    expect(html).toContain("(sandboxes.read)");
    expect(html).not.toContain("Create sandbox");
  });

  it("the limits page: without sandboxes.read, a forbidden page and no connection read", async () => {
    await signInAs(null);
    const html = markup(await LimitsPage());
    expect(upstream.calls).toBe(0);
    expect(html).toContain("(sandboxes.read)");
    expect(html).not.toContain("orkestr.internal.example");
  });

  it("volumes: without volumes.read a forbidden page; a viewer gets the list without its write actions", async () => {
    await signInAs(null);
    const html = markup(await VolumesPage());
    expect(upstream.calls).toBe(0);
    expect(html).toContain("(volumes.read)");
    /** The VolumesView element in the page's tree (a client component: its props are what the server decided). */
    const view = (node: unknown): ReactElement<{ canWrite: boolean }> | null => {
      if (Array.isArray(node)) return node.map(view).find(Boolean) ?? null;
      if (!isValidElement(node)) return null;
      if (node.type === VolumesView) return node as ReactElement<{ canWrite: boolean }>;
      return view((node.props as { children?: unknown }).children);
    };
    await signInAs("viewer");
    expect(view(await VolumesPage())?.props.canWrite).toBe(false);
    await signInAs("member");
    expect(view(await VolumesPage())?.props.canWrite).toBe(true);
  });

  it("create a sandbox: a viewer (no sandboxes.write) is told so, and nothing is read", async () => {
    await signInAs("viewer");
    const html = markup(await NewSandboxPage());
    expect(upstream.calls).toBe(0);
    expect(html).toContain("You cannot create sandboxes");
    expect(html).toContain("(sandboxes.write)");
    expect(html).not.toContain("orkestr.internal.example");
  });
});

// Every page and layout under app/(console) that reads data server-side must say which permission
// guards it, the one its API route requires: this list is that mapping, and the test fails for a
// new data-reading page that is not in it.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CONSOLE = path.join(ROOT, "app", "(console)");
const PAGE_PERMISSIONS: Record<string, string | null> = {
  "sandboxes/[id]/layout.tsx": "sandboxes.read", // GET /api/v1/sandboxes/{id}
  "sandboxes/page.tsx": "sandboxes.read", // GET /api/v1/sandboxes
  "sandboxes/new/page.tsx": "sandboxes.write", // POST /api/v1/sandboxes
  "limits/page.tsx": "sandboxes.read", // GET /api/v1/sandboxes/limits
  "events/page.tsx": "webhooks.read", // GET /api/hooks/events (the receiver is a webhook of the connection)
  "volumes/page.tsx": "volumes.read", // GET /api/v1/volumes (changes need volumes.write: the view is told)
  "templates/page.tsx": "templates.read", // GET /api/v1/templates
  "templates/[id]/page.tsx": "templates.read", // GET /api/v1/templates/{id}
  "templates/new/page.tsx": "templates.write", // POST /api/v1/templates
  "webhooks/page.tsx": "webhooks.read", // GET /api/v1/webhooks
  "webhooks/[id]/page.tsx": "webhooks.read", // GET /api/v1/webhooks/{id}
  "snapshots/page.tsx": "snapshots.read", // GET /api/v1/snapshots
  "snapshots/[id]/page.tsx": "snapshots.read", // GET /api/v1/snapshots/{id}
  // The user's own connections: GET /api/connections and /api/connections/status need a session only.
  "settings/connections/page.tsx": null,
  // The user's own account (name, password, sessions, second factor): /api/me/* need a session only.
  "settings/page.tsx": null,
  "settings/sso/page.tsx": "team.manage", // GET /api/team/sso
  "settings/team/page.tsx": "team.manage", // GET /api/team
  "settings/tokens/page.tsx": "team.read", // GET /api/tokens
  "audit/page.tsx": "audit.read", // GET /api/audit
  "layout.tsx": null,
};
const DATA_READS = /\b(withUpstream|orkestrFor|activeConnection|connectionList|connectionStatus|getMigratedDb)\s*\(/;

describe("the console's page × permission map", () => {
  const files = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) =>
        e.isDirectory()
          ? files(path.join(dir, e.name))
          : /^(page|layout)\.tsx$/.test(e.name)
            ? [path.join(dir, e.name)]
            : [],
      );

  it("names every page that reads data, and each one checks its permission", () => {
    for (const file of files(CONSOLE)) {
      const rel = path.relative(CONSOLE, file).split(path.sep).join("/");
      const source = fs.readFileSync(file, "utf8");
      if (!DATA_READS.test(source)) continue;
      expect(
        Object.keys(PAGE_PERMISSIONS),
        `${rel} reads data: add it to PAGE_PERMISSIONS with its API's permission`,
      ).toContain(rel);
      const perm = PAGE_PERMISSIONS[rel];
      if (perm) expect(source, rel).toContain(`requirePermission("${perm}")`);
    }
  });
});

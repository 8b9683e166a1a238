import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { POST as execStream } from "../../app/api/v1/sandboxes/[id]/exec/stream/route";
import { POST as execJson } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { DELETE as terminate, GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { GET as limits } from "../../app/api/v1/sandboxes/limits/route";
import { GET as listSandboxes, POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { testBackends } from "../../lib/server/db/test-backends";
import { clearFaults, injectFault } from "../../engine/test/helpers/engine";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

const idParams = (id: string) => ({ params: Promise.resolve({ id }) });

describe.each(testBackends)("the /api/v1 proxy on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function connected(role: "owner" | "viewer" = "owner") {
    const { user } = await makeUser(ctx.db(), role);
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    if (role === "owner")
      expect(
        (await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams)).status,
      ).toBe(201);
    return { user, cookie };
  }

  it("without a connection: 409 no_connection naming where to add one", async () => {
    const { user } = await makeUser(ctx.db());
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const res = await limits(request("/api/v1/sandboxes/limits", { cookie }), noParams);
    expect(res.status).toBe(409);
    expect(await jsonOf(res)).toMatchObject({
      code: "no_connection",
      detail: expect.stringContaining("Settings → Connections"),
    });
  });

  it("reads limits, creates, lists, gets, execs and terminates a sandbox through the proxy", async () => {
    const { cookie } = await connected();
    const lim = await limits(request("/api/v1/sandboxes/limits", { cookie }), noParams);
    expect(lim.status).toBe(200);
    expect(await jsonOf(lim)).toHaveProperty("plan");

    const created = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(created.status).toBe(201);
    const sandbox = (await jsonOf(created)) as { id: string; status: string };
    expect(sandbox.id).toMatch(/^sbx_/);

    const listed = await listSandboxes(request("/api/v1/sandboxes?limit=10", { cookie }), noParams);
    expect(listed.status).toBe(200);
    const items = (await listed.json()) as Array<{ id: string }>;
    expect(Array.isArray(items)).toBe(true);
    expect(items.map((s) => s.id)).toContain(sandbox.id);

    const one = await getSandbox(request(`/api/v1/sandboxes/${sandbox.id}`, { cookie }), idParams(sandbox.id));
    expect(await jsonOf(one)).toMatchObject({ id: sandbox.id });

    const ran = await execJson(
      request(`/api/v1/sandboxes/${sandbox.id}/exec`, {
        method: "POST",
        cookie,
        body: { command: "echo hello; exit 3" },
      }),
      idParams(sandbox.id),
    );
    expect(ran.status).toBe(200);
    expect(await jsonOf(ran)).toMatchObject({ stdout: "hello\n", exit_code: 3 });

    const bad = await execJson(
      request(`/api/v1/sandboxes/${sandbox.id}/exec`, { method: "POST", cookie, body: { command: "" } }),
      idParams(sandbox.id),
    );
    expect(bad.status).toBe(422);

    expect(
      (await terminate(request(`/api/v1/sandboxes/${sandbox.id}`, { method: "DELETE", cookie }), idParams(sandbox.id)))
        .status,
    ).toBe(204);
    // Unknown ids: the upstream's 404 comes through.
    const missing = await getSandbox(
      request("/api/v1/sandboxes/sbx_01NOSUCHSANDBOX0000000000", { cookie }),
      idParams("sbx_01NOSUCHSANDBOX0000000000"),
    );
    expect(missing.status).toBe(404);
    expect(await jsonOf(missing)).toMatchObject({ code: "sandbox_not_found" });
  });

  it("streams exec output unbuffered: the first chunk arrives before the command ends", async () => {
    const { cookie } = await connected();
    const sandbox = (await jsonOf(
      await createSandbox(
        request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
        noParams,
      ),
    )) as { id: string };
    for (const format of ["sse", "ndjson"] as const) {
      const started = Date.now();
      const res = await execStream(
        request(`/api/v1/sandboxes/${sandbox.id}/exec/stream?format=${format}`, {
          method: "POST",
          cookie,
          body: { command: "echo first; sleep 2; echo second" },
        }),
        idParams(sandbox.id),
      );
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(
        format === "sse" ? /text\/event-stream/ : /application\/x-ndjson/,
      );
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("x-accel-buffering")).toBe("no");
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let firstAt = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        if (!firstAt && text.includes("first")) firstAt = Date.now() - started;
      }
      const total = Date.now() - started;
      expect(text).toContain("second");
      expect(firstAt).toBeGreaterThan(0);
      expect(firstAt).toBeLessThan(1500);
      expect(total - firstAt).toBeGreaterThan(1500);
    }
    await terminate(request(`/api/v1/sandboxes/${sandbox.id}`, { method: "DELETE", cookie }), idParams(sandbox.id));
  });

  it("forwards an upstream 503 fleet_full with its Retry-After, at once", async () => {
    const { cookie } = await connected();
    await injectFault(ctx.engine(), {
      kind: "fleet_full",
      path: "^/v1/sandboxes$",
      method: "POST",
      retry_after_seconds: 7,
      count: 1,
    });
    try {
      const started = Date.now();
      const res = await createSandbox(
        request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
        noParams,
      );
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("7");
      expect(await jsonOf(res)).toMatchObject({ code: "fleet_full", retry_after_seconds: 7 });
      expect(Date.now() - started).toBeLessThan(5_000); // not retried on the browser's behalf
    } finally {
      await clearFaults(ctx.engine());
    }
  });

  it("checks Origin on mutations and the role's permission", async () => {
    const { cookie } = await connected();
    const cross = await createSandbox(
      request("/api/v1/sandboxes", {
        method: "POST",
        cookie,
        body: { template: "python-3.12" },
        headers: { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      }),
      noParams,
    );
    expect(cross.status).toBe(403);
    expect(await jsonOf(cross)).toMatchObject({ code: "bad_origin" });
    const viewer = await connected("viewer");
    const denied = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie: viewer.cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(denied.status).toBe(403);
    expect(await jsonOf(denied)).toMatchObject({ code: "forbidden" });
    expect((await listSandboxes(request("/api/v1/sandboxes", {}), noParams)).status).toBe(401);
  });
});

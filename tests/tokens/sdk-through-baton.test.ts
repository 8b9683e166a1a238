import "server-only";
import { describe, expect, it } from "vitest";
import { POST as createToken } from "../../app/api/tokens/route";
import { POST as execRoute } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { POST as execStreamRoute } from "../../app/api/v1/sandboxes/[id]/exec/stream/route";
import { GET as rawRead } from "../../app/api/v1/sandboxes/[id]/files/raw/route";
import { POST as presignDownload } from "../../app/api/v1/sandboxes/[id]/files/presign-download/route";
import { GET as getSandbox } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { testBackends } from "../../lib/server/db/test-backends";
import { connectLocalEngine } from "../../lib/server/tokens";
import type { CreatedApiTokenDto } from "../../lib/validations/api-tokens";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "../console/helpers";

// The orkestr SDK through Baton (issue 23), through the real route handlers and a real engine: what
// a client of the v1 contract holding a Baton token gets that a browser does not (README "The
// orkestr SDK through Baton"). The engine's whole contract suite through a running Baton is
// e2e/sdk-contract.spec.ts.

describe.each(testBackends)("the v1 contract for an API token's client on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function tokenClient() {
    const made = await makeUser(ctx.db(), "member");
    await connectLocalEngine(made.user.id, { teamId: made.teamId! });
    const { cookie } = await sessionCookie(ctx.db(), made.user.id);
    const res = await createToken(
      request("/api/tokens", { method: "POST", cookie, body: { name: "sdk", scope: "write" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    const { token, api_token } = (await res.json()) as CreatedApiTokenDto;
    const v1 = (path: string, init: { method?: string; body?: object; headers?: Record<string, string> } = {}) =>
      request(path, {
        method: init.method,
        body: init.body,
        headers: { authorization: `Bearer ${token}`, ...init.headers },
      });
    return { userId: made.user.id, teamId: made.teamId!, cookie, token, tokenId: api_token.id, v1 };
  }

  it("stamps baton.via=token and the token's id; a session's sandbox has neither", async () => {
    const c = await tokenClient();
    const res = await createSandbox(
      c.v1("/api/v1/sandboxes", { method: "POST", body: { template: "python-3.12" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    const made = (await res.json()) as { id: string; metadata: Record<string, string> };
    expect(made.metadata).toMatchObject({
      "baton.user": c.userId,
      "baton.team": c.teamId,
      "baton.via": "token",
      "baton.token": c.tokenId,
    });
    const viaSession = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie: c.cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    const s = (await viaSession.json()) as { metadata: Record<string, string> };
    expect(s.metadata["baton.user"]).toBe(c.userId);
    expect(s.metadata).not.toHaveProperty("baton.via");
    expect(s.metadata).not.toHaveProperty("baton.token");
    // A client cannot claim a channel.
    const forged = await createSandbox(
      c.v1("/api/v1/sandboxes", {
        method: "POST",
        body: { template: "python-3.12", metadata: { "baton.via": "mcp" } },
      }),
      noParams,
    );
    expect(forged.status).toBe(422);
    expect(await jsonOf(forged)).toMatchObject({ code: "reserved_metadata" });
  });

  it("answers errors in the contract's shape to a token, and Baton's one line to the browser", async () => {
    const c = await tokenClient();
    const bad = await createSandbox(c.v1("/api/v1/sandboxes", { method: "POST", body: { template: 42 } }), noParams);
    expect(bad.status).toBe(422);
    const body = (await jsonOf(bad)) as { code: string; detail: { loc: unknown[]; msg: string }[]; message: string };
    expect(body.code).toBe("validation_error");
    expect(body.detail[0]!.loc).toEqual(["body", "template"]);
    expect(typeof body.detail[0]!.msg).toBe("string");
    expect(body.message).toMatch(/^Template: /);
    const browser = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie: c.cookie, body: { template: 42 } }),
      noParams,
    );
    expect(await jsonOf(browser)).toMatchObject({
      code: "validation_error",
      detail: expect.stringMatching(/^Template: /),
    });
  });

  it("streams NDJSON on Accept, streams /exec with stream:true, and hands out absolute Baton-signed file links", async () => {
    const c = await tokenClient();
    const res = await createSandbox(
      c.v1("/api/v1/sandboxes", { method: "POST", body: { template: "python-3.12" } }),
      noParams,
    );
    const { id } = (await res.json()) as { id: string };
    const p = { params: Promise.resolve({ id }) };
    const nd = await execStreamRoute(
      c.v1(`/api/v1/sandboxes/${id}/exec/stream`, {
        method: "POST",
        body: { command: "echo hi > /workspace/a.txt; echo nd" },
        headers: { accept: "application/x-ndjson" },
      }),
      p,
    );
    expect(nd.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    const lines = (await nd.text())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ stream: "stdout", data: "nd\n" });
    expect(lines.at(-1)).toMatchObject({ is_final: true, exit_code: 0 });
    const streamed = await execRoute(
      c.v1(`/api/v1/sandboxes/${id}/exec`, { method: "POST", body: { command: "echo s", stream: true } }),
      p,
    );
    expect(streamed.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(await streamed.text()).toContain('"is_final":true');
    const plain = await execRoute(
      c.v1(`/api/v1/sandboxes/${id}/exec`, { method: "POST", body: { command: "echo p" } }),
      p,
    );
    expect(await jsonOf(plain)).toMatchObject({ stdout: "p\n", exit_code: 0 });

    const link = await presignDownload(
      c.v1(`/api/v1/sandboxes/${id}/files/presign-download`, { method: "POST", body: { path: "/workspace/a.txt" } }),
      p,
    );
    expect(link.status).toBe(200);
    const { url } = (await jsonOf(link)) as { url: string };
    expect(url).toMatch(
      new RegExp(`^http://baton\\.test/api/v1/sandboxes/${id}/files/raw\\?path=%2Fworkspace%2Fa\\.txt`),
    );
    const engine = ctx.engine();
    for (const secret of [engine.origin, new URL(engine.origin).host, engine.token, c.token])
      expect(url).not.toContain(secret);
    expect(url).toMatch(/&exp=\d+&tok=[^&]+&sig=[0-9a-f]{64}$/);
    const target = new URL(url);
    // Baton-signed (tests/tokens/signed-file-links.test.ts): it works with no header at all, as the
    // SDK's README says presigned URLs do.
    const file = await rawRead(request(target.pathname + target.search), p);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("hi\n");
    expect((await getSandbox(c.v1(`/api/v1/sandboxes/${id}`), p)).status).toBe(200);
  });
});

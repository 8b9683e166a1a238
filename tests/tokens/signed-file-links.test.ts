import "server-only";
import { describe, expect, it } from "vitest";
import { POST as createToken } from "../../app/api/tokens/route";
import { DELETE as revokeToken } from "../../app/api/tokens/[id]/route";
import { POST as writeFile } from "../../app/api/v1/sandboxes/[id]/files/route";
import { POST as presignDownload } from "../../app/api/v1/sandboxes/[id]/files/presign-download/route";
import { POST as presignUpload } from "../../app/api/v1/sandboxes/[id]/files/presign-upload/route";
import { GET as rawRead, PUT as rawWrite } from "../../app/api/v1/sandboxes/[id]/files/raw/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { testBackends } from "../../lib/server/db/test-backends";
import { fileLinkQuery, FILE_LINK_MAX_SECONDS } from "../../lib/server/file-link-signature";
import { connectLocalEngine } from "../../lib/server/tokens";
import type { CreatedApiTokenDto } from "../../lib/validations/api-tokens";
import { useLocalEngine } from "../console/engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "../console/helpers";

// Baton-signed file links (issue 23), through the real route handlers and a real engine: what
// presign-download and presign-upload answer an API token's client works with no cookie and no
// Authorization header (the SDK's "plain HTTP, no auth header"), for one method, team, sandbox and
// path, for at most an hour, and only while the token that made it is still valid and allowed.

/** A request as curl or another service sends a link: no cookie, no Authorization, no Origin. */
function bare(url: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) {
  const u = new URL(url);
  return new Request(`http://baton.test${u.pathname}${u.search}`, {
    method: init.method ?? "GET",
    headers: { host: "baton.test", ...init.headers },
    body: init.body,
    ...(init.body instanceof ReadableStream ? { duplex: "half" } : {}),
  } as RequestInit);
}

const paramsOf = (id: string) => ({ params: Promise.resolve({ id }) });

describe.each(testBackends)("signed file links on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  /** A member of a new team with a token of `scope`, connected to the engine, with a sandbox holding /workspace/a.txt. */
  async function client(scope: "read" | "write" = "write") {
    const made = await makeUser(ctx.db(), "member");
    await connectLocalEngine(made.user.id, { teamId: made.teamId! });
    const { cookie } = await sessionCookie(ctx.db(), made.user.id);
    const mint = async (s: "read" | "write") => {
      const res = await createToken(
        request("/api/tokens", { method: "POST", cookie, body: { name: `sdk-${s}`, scope: s } }),
        noParams,
      );
      expect(res.status).toBe(201);
      return (await res.json()) as CreatedApiTokenDto;
    };
    const writer = await mint("write");
    const { token, api_token } = scope === "write" ? writer : await mint("read");
    const v1 = (path: string, init: { method?: string; body?: object; bearer?: string } = {}) =>
      request(path, {
        method: init.method,
        body: init.body,
        headers: { authorization: `Bearer ${init.bearer ?? token}` },
      });
    const res = await createSandbox(
      v1("/api/v1/sandboxes", { method: "POST", body: { template: "python-3.12" }, bearer: writer.token }),
      noParams,
    );
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const wrote = await writeFile(
      v1(`/api/v1/sandboxes/${id}/files`, {
        method: "POST",
        body: { path: "/workspace/a.txt", content: "hi\n", encoding: "utf8" },
        bearer: writer.token,
      }),
      paramsOf(id),
    );
    expect(wrote.status).toBe(201);
    const team = await ctx
      .db()
      .selectFrom("teams")
      .select("slug")
      .where("id", "=", made.teamId!)
      .executeTakeFirstOrThrow();
    const presign = async (kind: "download" | "upload", body: object = { path: "/workspace/a.txt" }) => {
      const handler = kind === "download" ? presignDownload : presignUpload;
      const r = await handler(
        v1(`/api/v1/sandboxes/${id}/files/presign-${kind}`, { method: "POST", body }),
        paramsOf(id),
      );
      expect(r.status, JSON.stringify(await r.clone().json())).toBe(200);
      return (await r.json()) as { url: string; method: string; expires_at: string | null };
    };
    return {
      userId: made.user.id,
      teamId: made.teamId!,
      teamSlug: team.slug,
      cookie,
      token,
      tokenId: api_token.id,
      sandboxId: id,
      v1,
      presign,
    };
  }

  const read = (url: string, id: string) => rawRead(bare(url), paramsOf(id));
  const write = (url: string, id: string, body: BodyInit, headers: Record<string, string> = {}) =>
    rawWrite(bare(url, { method: "PUT", body, headers }), paramsOf(id));
  async function refused(res: Response, status: number, code: string) {
    expect(res.status, code).toBe(status);
    expect(await jsonOf(res)).toMatchObject({ code, detail: expect.any(String) });
  }

  it("downloads and uploads with no auth header; nothing of the engine in the link", async () => {
    const c = await client();
    const before = Date.now();
    const down = await c.presign("download");
    expect(down.method).toBe("GET");
    const url = new URL(down.url);
    expect(url.origin).toBe("http://baton.test");
    expect(url.pathname).toBe(`/api/v1/sandboxes/${c.sandboxId}/files/raw`);
    expect([...url.searchParams.keys()]).toEqual(["path", "team", "exp", "tok", "sig"]);
    expect(url.searchParams.get("team")).toBe(c.teamSlug);
    expect(url.searchParams.get("tok")).toBe(c.tokenId);
    // The contract's default, 300 s.
    expect(Number(url.searchParams.get("exp"))).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 300);
    expect(Date.parse(down.expires_at!)).toBe(Number(url.searchParams.get("exp")) * 1000);
    const engine = ctx.engine();
    for (const secret of [engine.origin, new URL(engine.origin).host, engine.token, c.token])
      expect(down.url).not.toContain(secret);

    const file = await read(down.url, c.sandboxId);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("hi\n");
    // Reusable until expiry.
    expect(await (await read(down.url, c.sandboxId)).text()).toBe("hi\n");

    const up = await c.presign("upload", { path: "/workspace/up.bin", max_bytes: 16 });
    expect(up.method).toBe("PUT");
    expect(new URL(up.url).searchParams.get("max")).toBe("16");
    const put = await write(up.url, c.sandboxId, "uploaded", { "content-type": "application/octet-stream" });
    expect(put.status).toBe(201);
    expect(await jsonOf(put)).toMatchObject({ path: "/workspace/up.bin", size: 8 });
    const back = await c.presign("download", { path: "/workspace/up.bin" });
    expect(await (await read(back.url, c.sandboxId)).text()).toBe("uploaded");

    // The upload is in the audit log as the token's, marked as made through a link.
    const rows = await ctx
      .db()
      .selectFrom("audit_events")
      .selectAll()
      .where("action", "=", "sandbox.file_upload")
      .where("user_id", "=", c.userId)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.credential).toBe(`token:sdk-write (${c.tokenId})`);
    expect(JSON.parse(String(rows[0]!.data))).toMatchObject({ path: "/workspace/up.bin", via: "signed_link" });
  });

  it("caps the expiry at an hour and says so in expires_at; an expired link is 410 url_expired", async () => {
    const c = await client();
    const long = await c.presign("download", { path: "/workspace/a.txt", expires_in_seconds: 86_400 });
    const exp = Number(new URL(long.url).searchParams.get("exp"));
    expect(exp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + FILE_LINK_MAX_SECONDS);
    expect(Date.parse(long.expires_at!)).toBe(exp * 1000);
    // A link Baton signed that has run out (signed here, as no test waits an hour).
    const expired = fileLinkQuery({
      method: "GET",
      team: c.teamSlug,
      sandboxId: c.sandboxId,
      path: "/workspace/a.txt",
      exp: Math.floor(Date.now() / 1000) - 1,
      tokenId: c.tokenId,
    });
    await refused(
      await read(`http://baton.test/api/v1/sandboxes/${c.sandboxId}/files/raw?${expired}`, c.sandboxId),
      410,
      "url_expired",
    );
  });

  it("refuses a changed link: path, sandbox, method, expiry, max_bytes, team (403 invalid_signature)", async () => {
    const c = await client();
    const other = await createSandbox(
      c.v1("/api/v1/sandboxes", { method: "POST", body: { template: "python-3.12" } }),
      noParams,
    );
    const otherId = ((await other.json()) as { id: string }).id;
    const down = await c.presign("download");
    const up = await c.presign("upload", { path: "/workspace/up.bin", max_bytes: 4 });
    const change = (url: string, key: string, value: string) => {
      const u = new URL(url);
      u.searchParams.set(key, value);
      return u.toString();
    };
    await refused(await read(change(down.url, "path", "/workspace/b.txt"), c.sandboxId), 403, "invalid_signature");
    await refused(await read(change(down.url, "exp", "9999999999"), c.sandboxId), 403, "invalid_signature");
    await refused(await read(change(down.url, "sig", "0".repeat(64)), c.sandboxId), 403, "invalid_signature");
    // The same link on another sandbox of the same team (the path says /sandboxes/<other>).
    const moved = down.url.replace(c.sandboxId, otherId);
    await refused(await read(moved, otherId), 403, "invalid_signature");
    // A download link never uploads; an upload link never downloads.
    await refused(await write(down.url, c.sandboxId, "x"), 403, "invalid_signature");
    await refused(await read(up.url, c.sandboxId), 403, "invalid_signature");
    await refused(await write(change(up.url, "max", "1000"), c.sandboxId, "x"), 403, "invalid_signature");
    // An Authorization header or a cookie does not stand in for a bad signature.
    await refused(
      await rawRead(
        bare(change(down.url, "path", "/workspace/b.txt"), {
          headers: { authorization: `Bearer ${c.token}`, cookie: c.cookie },
        }),
        paramsOf(c.sandboxId),
      ),
      403,
      "invalid_signature",
    );
  });

  it("two teams: a link of team A's sandbox cannot be replayed against team B", async () => {
    const a = await client();
    const b = await client();
    const down = await a.presign("download");
    const up = await a.presign("upload", { path: "/workspace/up.bin" });
    const inB = (url: string) => {
      const u = new URL(url.replace(a.sandboxId, b.sandboxId));
      u.searchParams.set("team", b.teamSlug);
      return u.toString();
    };
    await refused(await read(down.url.replace(a.sandboxId, b.sandboxId), b.sandboxId), 403, "invalid_signature");
    await refused(await read(inB(down.url), b.sandboxId), 403, "invalid_signature");
    await refused(await write(inB(up.url), b.sandboxId, "from A"), 403, "invalid_signature");
    // Naming team B on A's own sandbox is no better.
    const u = new URL(down.url);
    u.searchParams.set("team", b.teamSlug);
    await refused(await read(u.toString(), a.sandboxId), 403, "invalid_signature");
    // B's token's own link, with A's token id put in: refused too.
    const bDown = new URL((await b.presign("download")).url);
    bDown.searchParams.set("tok", a.tokenId);
    await refused(await read(bDown.toString(), b.sandboxId), 403, "invalid_signature");
    // And B's file is untouched: B's own link still reads it.
    expect(await (await read((await b.presign("download")).url, b.sandboxId)).text()).toBe("hi\n");
  });

  it("a link stops working when its token is revoked, its owner leaves, or its role no longer allows it", async () => {
    const c = await client();
    const down = await c.presign("download");
    const up = await c.presign("upload", { path: "/workspace/up.bin" });
    expect((await read(down.url, c.sandboxId)).status).toBe(200);
    const revoke = await revokeToken(
      request(`/api/tokens/${c.tokenId}`, { method: "DELETE", cookie: c.cookie }),
      paramsOf(c.tokenId),
    );
    expect(revoke.status).toBe(200);
    await refused(await read(down.url, c.sandboxId), 403, "link_revoked");
    await refused(await write(up.url, c.sandboxId, "x"), 403, "link_revoked");

    // A role that no longer grants the write (a demotion to viewer Baton's own paths did not see).
    const d = await client();
    const dUp = await d.presign("upload", { path: "/workspace/up.bin" });
    const dDown = await d.presign("download");
    await ctx.db().updateTable("memberships").set({ role: "viewer" }).where("user_id", "=", d.userId).execute();
    await refused(await write(dUp.url, d.sandboxId, "x"), 403, "link_revoked");
    expect((await read(dDown.url, d.sandboxId)).status).toBe(200);
    // No longer in the team at all.
    await ctx.db().deleteFrom("memberships").where("user_id", "=", d.userId).execute();
    await refused(await read(dDown.url, d.sandboxId), 403, "link_revoked");
  });

  it("a read token's link reads; a PUT link in its name is link_revoked (its scope cannot write)", async () => {
    const c = await client("read");
    const down = await c.presign("download");
    expect(await (await read(down.url, c.sandboxId)).text()).toBe("hi\n");
    const forged = fileLinkQuery({
      method: "PUT",
      team: c.teamSlug,
      sandboxId: c.sandboxId,
      path: "/workspace/a.txt",
      exp: Math.floor(Date.now() / 1000) + 60,
      tokenId: c.tokenId,
    });
    await refused(
      await write(`http://baton.test/api/v1/sandboxes/${c.sandboxId}/files/raw?${forged}`, c.sandboxId, "x"),
      403,
      "link_revoked",
    );
  });

  it("an upload link holds its max_bytes: 413 by Content-Length and mid-stream", async () => {
    const c = await client();
    const up = await c.presign("upload", { path: "/workspace/capped.bin", max_bytes: 4 });
    await refused(await write(up.url, c.sandboxId, "too long"), 413, "payload_too_large");
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("abc"));
        controller.enqueue(new TextEncoder().encode("defgh"));
        controller.close();
      },
    });
    await refused(await write(up.url, c.sandboxId, chunked), 413, "payload_too_large");
    const ok = await write(up.url, c.sandboxId, "abcd");
    expect(ok.status).toBe(201);
    expect(await jsonOf(ok)).toMatchObject({ size: 4 });
  });

  it("the browser keeps its same-origin, session-authorized link with no expiry", async () => {
    const c = await client();
    const res = await presignDownload(
      request(`/api/v1/sandboxes/${c.sandboxId}/files/presign-download`, {
        method: "POST",
        cookie: c.cookie,
        body: { path: "/workspace/a.txt" },
      }),
      paramsOf(c.sandboxId),
    );
    const link = (await jsonOf(res)) as { url: string; expires_at: null };
    expect(link.url).toBe(`/api/v1/sandboxes/${c.sandboxId}/files/raw?path=%2Fworkspace%2Fa.txt&team=${c.teamSlug}`);
    expect(link.expires_at).toBeNull();
    expect((await read(`http://baton.test${link.url}`, c.sandboxId)).status).toBe(401);
  });
});

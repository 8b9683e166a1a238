import "server-only";
import { describe, expect, it } from "vitest";
import { POST as localEngine } from "../../app/api/connections/local-engine/route";
import { POST as execJson } from "../../app/api/v1/sandboxes/[id]/exec/route";
import { GET as live } from "../../app/api/v1/sandboxes/[id]/live/route";
import { POST as pause } from "../../app/api/v1/sandboxes/[id]/pause/route";
import { DELETE as terminate } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { testBackends } from "../../lib/server/db/test-backends";
import { POST as logout } from "../../app/api/auth/logout/route";
import { ACCESS_RECHECK } from "../../lib/server/access-watch";
import { LIVE_LIMITS, liveHubs } from "../../lib/server/live/live-response";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// GET /api/v1/sandboxes/{id}/live against a real engine: what a sandbox page's stream carries, that
// two tabs of one connection share one upstream reader, and the errors a tab gets instead of a stream.

type Params = Record<string, string>;
const params = (p: Params) => ({ params: Promise.resolve(p) });

/** A tab's stream, read as it arrives; `until` waits for the text to satisfy a check. */
function reader(res: Response) {
  const r = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    get text() {
      return text;
    },
    async until(check: (text: string) => boolean): Promise<string> {
      while (!check(text)) {
        const { done, value } = await r.read();
        if (done) throw new Error(`the stream ended before the check held:\n${text}`);
        text += decoder.decode(value, { stream: true });
      }
      return text;
    },
    cancel: () => r.cancel().catch(() => undefined),
  };
}

describe.each(testBackends)("GET /api/v1/sandboxes/{id}/live on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));

  async function connected() {
    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const res = await localEngine(request("/api/connections/local-engine", { method: "POST", cookie }), noParams);
    expect(res.status).toBe(201);
    return { user, cookie };
  }

  async function newSandbox(cookie: string): Promise<string> {
    const res = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    return ((await jsonOf(res)) as { id: string }).id;
  }

  const open = (id: string, cookie: string, signal: AbortSignal, headers: Record<string, string> = {}) =>
    live(new Request(request(`/api/v1/sandboxes/${id}/live`, { cookie, headers }), { signal }), params({ id }));

  it("pushes the sandbox, its metrics and its timeline, to two tabs from one upstream reader", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    const abort = new AbortController();
    const res = await open(id, cookie, abort.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const a = reader(res);
    await a.until((t) => t.includes("event: sandbox\n") && t.includes("sandbox.created"));
    expect(a.text).toContain(`"id":"${id}"`);
    await a.until((t) => t.includes("event: metrics\n"));

    const b = reader(await open(id, cookie, abort.signal));
    await b.until((t) => t.includes("sandbox.created") && t.includes("event: metrics\n"));
    // Both tabs are fed by one hub: one upstream reader for the connection and sandbox.
    expect(liveHubs().count).toBe(1);

    // A command shows up in both timelines; a pause shows up as a pushed sandbox in both.
    const exec = await execJson(
      request(`/api/v1/sandboxes/${id}/exec`, { method: "POST", cookie, body: { command: "echo live" } }),
      params({ id }),
    );
    expect(exec.status).toBe(200);
    await Promise.all([a, b].map((t) => t.until((text) => text.includes("echo live"))));
    const paused = await pause(request(`/api/v1/sandboxes/${id}/pause`, { method: "POST", cookie }), params({ id }));
    expect(paused.status).toBeLessThan(300);
    await Promise.all([a, b].map((t) => t.until((text) => text.includes('"status":"paused"'))));
    // Event ids ride along, so a reconnecting EventSource resumes after the last one.
    expect(a.text).toMatch(/^id: \S+$/m);

    abort.abort();
    await a.cancel();
    await b.cancel();
    expect(liveHubs().count).toBe(0);
    await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), params({ id }));
  });

  it("ends a tab's stream once its session is signed out (asked every few seconds)", async () => {
    const { user, cookie } = await connected();
    const id = await newSandbox(cookie);
    const every = ACCESS_RECHECK.streamMs;
    ACCESS_RECHECK.streamMs = 100;
    const abort = new AbortController();
    try {
      const tab = reader(await open(id, cookie, abort.signal));
      await tab.until((t) => t.includes("event: sandbox\n"));
      const out = await logout(request("/api/auth/logout", { method: "POST", cookie }), noParams);
      expect(out.status).toBe(200);
      // The stream ends on its own: `until` throws when it does, with what was read.
      await expect(tab.until(() => false)).rejects.toThrow(/the stream ended/);
      expect(liveHubs().count).toBe(0);
    } finally {
      ACCESS_RECHECK.streamMs = every;
      abort.abort();
    }
    const { cookie: fresh } = await sessionCookie(ctx.db(), user.id);
    await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie: fresh }), params({ id }));
  });

  it("refuses a session's live stream past the per-session cap with 429 and a clear message, and counts closed ones out", async () => {
    const { user, cookie } = await connected();
    const id = await newSandbox(cookie);
    const cap = LIVE_LIMITS.streamsPerSession;
    LIVE_LIMITS.streamsPerSession = 2;
    const abort = [new AbortController(), new AbortController()];
    try {
      const tabs = await Promise.all(abort.map((a) => open(id, cookie, a.signal)));
      expect(tabs.map((t) => t.status)).toEqual([200, 200]);
      const third = await open(id, cookie, new AbortController().signal);
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBe("3");
      expect(await jsonOf(third)).toMatchObject({ code: "rate_limited", detail: expect.stringMatching(/Close some/) });
      // Another sign-in of the same user (another browser) is not held back by this one's streams,
      // nor is another user.
      const { cookie: secondBrowser } = await sessionCookie(ctx.db(), user.id);
      const fromThere = await open(id, secondBrowser, abort[0]!.signal);
      expect(fromThere.status).toBe(200);
      await reader(fromThere).cancel();
      const other = await connected();
      const theirs = await open(await newSandbox(other.cookie), other.cookie, abort[0]!.signal);
      expect(theirs.status).toBe(200);
      await reader(theirs).cancel();
      // A tab that closes frees its place.
      abort[1]!.abort();
      await reader(tabs[1]!).cancel();
      const again = await open(id, cookie, abort[1]!.signal);
      expect(again.status).toBe(200);
      await reader(again).cancel();
      await reader(tabs[0]!).cancel();
    } finally {
      LIVE_LIMITS.streamsPerSession = cap;
      for (const a of abort) a.abort();
    }
    await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), params({ id }));
  });

  it("resumes after Last-Event-ID: only the events after it", async () => {
    const { cookie } = await connected();
    const id = await newSandbox(cookie);
    await execJson(
      request(`/api/v1/sandboxes/${id}/exec`, { method: "POST", cookie, body: { command: "echo first" } }),
      params({ id }),
    );
    const abort = new AbortController();
    const first = reader(await open(id, cookie, abort.signal));
    await first.until((t) => t.includes("echo first"));
    const ids = [...first.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);
    const created = ids[0]!;
    abort.abort();
    await first.cancel();

    const again = new AbortController();
    const resumed = reader(await open(id, cookie, again.signal, { "last-event-id": created }));
    await resumed.until((t) => t.includes("echo first"));
    expect(resumed.text).not.toContain("sandbox.created");
    again.abort();
    await resumed.cancel();
    await terminate(request(`/api/v1/sandboxes/${id}`, { method: "DELETE", cookie }), params({ id }));
  });

  it("answers an unknown sandbox with the upstream's 404 and a user without a connection with 409, not a stream", async () => {
    const { cookie } = await connected();
    const abort = new AbortController();
    const missing = await open("sbx_doesnotexist", cookie, abort.signal);
    expect(missing.status).toBe(404);
    expect(await jsonOf(missing)).toMatchObject({ code: "sandbox_not_found" });
    expect(liveHubs().count).toBe(0);

    const { user } = await makeUser(ctx.db(), "owner");
    const { cookie: other } = await sessionCookie(ctx.db(), user.id);
    const none = await open("sbx_doesnotexist", other, abort.signal);
    expect(none.status).toBe(409);
    expect(await jsonOf(none)).toMatchObject({ code: "no_connection" });
  });
});

import "server-only";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POST as logoutEverywhere } from "../../app/api/auth/logout-everywhere/route";
import { GET as events } from "../../app/api/v1/sandboxes/[id]/events/route";
import { POST as execStream } from "../../app/api/v1/sandboxes/[id]/exec/stream/route";
import { GET as live } from "../../app/api/v1/sandboxes/[id]/live/route";
import { DELETE as terminate } from "../../app/api/v1/sandboxes/[id]/route";
import { POST as createSandbox } from "../../app/api/v1/sandboxes/route";
import { changeMemberRole, removeTeamMember } from "../../lib/server/access";
import { ACCESS_RECHECK } from "../../lib/server/access-watch";
import { addMember } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { createUser } from "../../lib/server/db/users";
import { connectLocalEngine, revokeEngineAccess } from "../../lib/server/tokens";
import { useLocalEngine } from "./engine-harness";
import { jsonOf, makeUser, noParams, request, sessionCookie, uniq, useConsoleDb } from "./helpers";

// The console's own long-lived answers end when what allowed them is gone (issue 20 item 3, the
// console's half): a proxied event feed, a command's streamed output and the live sandbox stream
// are authorized when they open, then re-asked every ACCESS_RECHECK.streamMs (shortened here) for
// the session, the team membership, the role and the connection. The engine is real; whether it
// also ends its own streams on a revoked token is the engine's half, tested there.

type Params = Record<string, string>;
const params = (p: Params) => ({ params: Promise.resolve(p) });
const WAIT_MS = 5_000;

/** Reads a response body until it ends (true) or WAIT_MS pass with it still open (false). */
async function endsWithin(res: Response, ms = WAIT_MS): Promise<boolean> {
  const reader = res.body!.getReader();
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      const next = await Promise.race([
        reader.read().then(
          (r) => r,
          () => ({ done: true as const, value: undefined }),
        ),
        new Promise<"open">((r) => setTimeout(() => r("open"), left)),
      ]);
      if (next === "open") return false;
      if (next.done) return true;
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
}

/** Reads until `text` has arrived (the stream is flowing), leaving the rest unread. */
async function readUntil(res: Response, text: string): Promise<Response> {
  const [mine, rest] = res.body!.tee();
  const reader = mine.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  while (!seen.includes(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before "${text}":\n${seen}`);
    seen += decoder.decode(value, { stream: true });
  }
  void reader.cancel().catch(() => undefined);
  return new Response(rest);
}

/** Starts a 30 s command's streamed output as member `m` and waits for its first line. */
async function tickingCommand(m: { sandboxId: string; cookie: string }, signal: AbortSignal): Promise<Response> {
  const res = await execStream(
    new Request(
      request(`/api/v1/sandboxes/${m.sandboxId}/exec/stream`, {
        method: "POST",
        cookie: m.cookie,
        body: { command: "for i in $(seq 1 60); do echo tick-$i; sleep 0.5; done" },
      }),
      { signal },
    ),
    params({ id: m.sandboxId }),
  );
  expect(res.status).toBe(200);
  return readUntil(res, "tick-1");
}

describe.each(testBackends)("open streams on $name", (backend) => {
  const ctx = useLocalEngine(() => useConsoleDb(backend));
  const every = ACCESS_RECHECK.streamMs;
  beforeAll(() => {
    ACCESS_RECHECK.streamMs = 200;
  });
  afterAll(() => {
    ACCESS_RECHECK.streamMs = every;
  });

  /** A member of a fresh team, connected to the local engine, with a running sandbox of the team. */
  async function memberWithSandbox() {
    const owner = await makeUser(ctx.db(), "owner");
    const user = await createUser(ctx.db(), { email: `${uniq("member")}@example.com`, passwordHash: null });
    await addMember(ctx.db(), { teamId: owner.teamId!, userId: user.id, role: "member" });
    await connectLocalEngine(user.id, { db: ctx.db(), teamId: owner.teamId!, label: "streams" });
    const { cookie } = await sessionCookie(ctx.db(), user.id);
    const res = await createSandbox(
      request("/api/v1/sandboxes", { method: "POST", cookie, body: { template: "python-3.12" } }),
      noParams,
    );
    expect(res.status).toBe(201);
    const sandboxId = ((await jsonOf(res)) as { id: string }).id;
    const ownerCookie = (await sessionCookie(ctx.db(), owner.user.id)).cookie;
    await connectLocalEngine(owner.user.id, { db: ctx.db(), teamId: owner.teamId! });
    const cleanup = () =>
      terminate(
        request(`/api/v1/sandboxes/${sandboxId}`, { method: "DELETE", cookie: ownerCookie }),
        params({ id: sandboxId }),
      );
    return { userId: user.id, teamId: owner.teamId!, cookie, sandboxId, cleanup };
  }

  const follow = (id: string, cookie: string, signal: AbortSignal) =>
    events(new Request(request(`/api/v1/sandboxes/${id}/events?follow=true`, { cookie }), { signal }), params({ id }));

  it("a proxied event feed ends once its user is removed from the team", async () => {
    const m = await memberWithSandbox();
    const abort = new AbortController();
    try {
      const res = await follow(m.sandboxId, m.cookie, abort.signal);
      expect(res.status).toBe(200);
      const open = await readUntil(res, "sandbox.created");
      await removeTeamMember({ teamId: m.teamId, userId: m.userId });
      expect(await endsWithin(open), "the event feed was still open").toBe(true);
    } finally {
      abort.abort();
      await m.cleanup();
    }
  }, 30_000);

  it("a command's streamed output ends after a sign-out everywhere", async () => {
    const m = await memberWithSandbox();
    const abort = new AbortController();
    try {
      const open = await tickingCommand(m, abort.signal);
      const out = await logoutEverywhere(
        request("/api/auth/logout-everywhere", { method: "POST", cookie: m.cookie }),
        noParams,
      );
      expect(out.status).toBe(200);
      expect(await endsWithin(open), "the command's output was still streaming").toBe(true);
    } finally {
      abort.abort();
      await m.cleanup();
    }
  }, 30_000);

  it("a command's streamed output ends when the role no longer allows running commands", async () => {
    const m = await memberWithSandbox();
    const abort = new AbortController();
    try {
      const open = await tickingCommand(m, abort.signal);
      await changeMemberRole({ teamId: m.teamId, userId: m.userId, role: "viewer" });
      expect(await endsWithin(open), "the command's output was still streaming").toBe(true);
    } finally {
      abort.abort();
      await m.cleanup();
    }
  }, 30_000);

  it("the live sandbox stream ends when the connection's engine token is revoked", async () => {
    const m = await memberWithSandbox();
    const abort = new AbortController();
    try {
      const res = await live(
        new Request(request(`/api/v1/sandboxes/${m.sandboxId}/live`, { cookie: m.cookie }), { signal: abort.signal }),
        params({ id: m.sandboxId }),
      );
      expect(res.status).toBe(200);
      const open = await readUntil(res, "event: sandbox");
      expect(await revokeEngineAccess(m.userId, { teamId: m.teamId })).toBe(1);
      expect(await endsWithin(open), "the live stream was still open").toBe(true);
    } finally {
      abort.abort();
      await m.cleanup();
    }
  }, 30_000);
});

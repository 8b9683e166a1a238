import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./helpers/async.js";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { createTemplate } from "./helpers/templates.js";

/**
 * Open streams (events and build logs followed live, exec streams, terminal WebSockets) against a
 * real engine: they end when their token is revoked or expires (security item 3), and one token
 * or one account holds only so many at once (item 5). The caps are lowered here (3 per token, 5
 * per account) so they are reached with a handful of streams; the token check runs at its
 * default period (2 s).
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let e: EngineHandle;
let dataDir: string;
let sbx: string;

beforeAll(async () => {
  dataDir = fs.mkdtempSync("/var/tmp/baton-streams-");
  e = await startEngine({
    dataDir,
    env: {
      ORKESTR_ENGINE_KEEPALIVE_MS: "200",
      ORKESTR_ENGINE_STREAMS_PER_TOKEN: "3",
      ORKESTR_ENGINE_STREAMS_PER_ACCOUNT: "5",
    },
  });
  sbx = await createSandbox(e);
});
afterAll(async () => {
  await e?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A response read as it arrives: its text so far, and a promise that settles when it ends. */
interface Open {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely typed JSON
  body: any;
  retryAfter: string | null;
  text(): string;
  ended: Promise<void>;
  close(): void;
}

const opened: { close(): void; ended?: Promise<unknown> }[] = [];
// Every test starts with no stream of its own left open: closed, and given time to count as closed.
afterEach(async () => {
  const left = opened.splice(0);
  for (const s of left) s.close();
  await Promise.all(left.map((s) => s.ended));
  await new Promise((r) => setTimeout(r, 300));
});

async function open(token: string, p: string, init: { method?: string; body?: unknown; accept?: string } = {}) {
  const ac = new AbortController();
  const res = await fetch(`${e.url}${p}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body ? { "content-type": "application/json" } : {}),
      ...(init.accept ? { accept: init.accept } : {}),
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
    signal: ac.signal,
  });
  let text = "";
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk);
    } catch {
      // aborted by close()
    }
  })();
  const s: Open = {
    status: res.status,
    body: undefined,
    retryAfter: res.headers.get("retry-after"),
    text: () => text,
    ended,
    close: () => ac.abort(),
  };
  if (res.status !== 200) {
    await ended;
    s.body = JSON.parse(text);
  } else opened.push(s);
  return s;
}

const follow = (token: string, sandbox = sbx) => open(token, `/sandboxes/${sandbox}/events?follow=true`);
const execStream = (token: string, command: string, extra: Record<string, unknown> = {}) =>
  open(token, `/sandboxes/${sbx}/exec/stream`, { method: "POST", body: { command, ...extra } });

/** Resolves when `p` settles within `ms`, else rejects saying what did not end. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)),
  ]);
}

async function tokenId(label: string): Promise<string> {
  const r = await fetch(`${e.origin}/_admin/tokens`, { headers: { "x-baton-bootstrap": e.bootstrap! } });
  const found = ((await r.json()) as { id: string; label: string | null }[]).find((t) => t.label === label);
  if (!found) throw new Error(`no token labelled ${label}`);
  return found.id;
}

async function revoke(label: string): Promise<void> {
  const r = await fetch(`${e.origin}/_admin/tokens/${await tokenId(label)}`, {
    method: "DELETE",
    headers: { "x-baton-bootstrap": e.bootstrap! },
  });
  expect(r.status).toBe(204);
}

const rw = ["sandboxes:read", "sandboxes:write"];

/** A terminal viewer: its output, its control frames, and how it closed. */
async function terminal(token: string) {
  const pty = await e.api("POST", `/sandboxes/${sbx}/pty`, {}, { token });
  expect(pty.status, pty.text).toBe(201);
  const ws = new WebSocket(`${e.origin.replace(/^http/, "ws")}${pty.body.ws_path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  let out = "";
  const controls: { type: string; message?: string }[] = [];
  ws.on("message", (d, binary) => {
    if (binary) out += d.toString();
    else controls.push(JSON.parse(d.toString()));
  });
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.once("close", (code, reason) => r({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_q, res) => reject(new Error(`unexpected ${res.statusCode}`)));
  });
  opened.push({ close: () => ws.terminate(), ended: closed });
  return { ws, pty: pty.body as { id: string }, out: () => out, controls, closed };
}

/** The HTTP answer to a terminal upgrade that is refused. */
async function refusedUpgrade(token: string, ptyPath: string): Promise<{ status: number; body: { code?: string } }> {
  const ws = new WebSocket(`${e.origin.replace(/^http/, "ws")}${ptyPath}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      ws.terminate();
      reject(new Error("upgrade was accepted"));
    });
    ws.once("unexpected-response", (req, res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || "{}") });
      });
    });
    ws.once("error", () => undefined);
  });
}

describe("revocation reaches open streams", () => {
  it("revoking a token ends its event stream, exec stream and terminal at once; another token's stay open", async () => {
    const t = await e.mint(rw, { label: "revoked-at-once" });
    const u = await e.mint(rw, { label: "stays" });
    const events = await follow(t);
    const running = await execStream(t, "echo go; sleep 31");
    await eventually(() => expect(running.text()).toContain('"data":"go\\n"'));
    const term = await terminal(t);
    term.ws.send(Buffer.from("echo before-$((40+2))\r"));
    await eventually(() => expect(term.out()).toContain("before-42"), { timeout: 15_000 });
    const other = await follow(u);
    for (const s of [events, running, other]) expect(s.status).toBe(200);

    const revokedAt = Date.now();
    await revoke("revoked-at-once");
    await within(events.ended, 1000, "the event stream");
    await within(running.ended, 1000, "the exec stream");
    const close = await within(term.closed, 1000, "the terminal");
    expect(Date.now() - revokedAt).toBeLessThan(1500);

    // Each says why, in its own framing.
    expect(events.text()).toMatch(
      /event: error\ndata: \{"detail":"The token this stream was opened with was revoked[^\n]*","code":"token_revoked"\}\n\n$/,
    );
    const last = running
      .text()
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)))
      .at(-1);
    expect(last).toMatchObject({ is_final: true, code: "token_revoked" });
    expect(close).toEqual({ code: 4401, reason: "token revoked" });
    expect(term.controls.at(-1)).toMatchObject({ type: "error", message: expect.stringMatching(/was revoked/) });

    // Nothing typed after the revocation reaches the terminal (the socket is closed, and the engine
    // stopped reading it before): the terminal itself runs on for other viewers.
    try {
      term.ws.send(Buffer.from("touch /tmp/after-revoke\r"));
    } catch {
      // closed: as expected
    }
    const viewer = await e.api("GET", `/sandboxes/${sbx}/pty/${term.pty.id}`, undefined, { token: u });
    expect(viewer.body).toMatchObject({ status: "running", viewers: 0 });
    expect((await exec(e, sbx, "test -e /tmp/after-revoke && echo yes || echo no")).stdout).toBe("no\n");

    // The other token's stream is untouched, and the revoked one is refused from now on.
    await new Promise((r) => setTimeout(r, 500));
    expect(other.text()).toMatch(/: keepalive/);
    expect(other.text()).not.toMatch(/event: error/);
    expect((await follow(t)).status).toBe(401);
    await e.api("DELETE", `/sandboxes/${sbx}/pty/${term.pty.id}`);
  });

  it("a token revoked by another process (the engine:token CLI) ends its streams within the check period", async () => {
    const t = await e.mint(rw, { label: "revoked-by-cli" });
    const events = await follow(t);
    const id = await tokenId("revoked-by-cli");
    const cli = spawnSync(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "engine/src/cli/token.ts"), "--revoke", id],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, BATON_DATA_DIR: dataDir },
        encoding: "utf8",
      },
    );
    expect(cli.status, cli.stderr).toBe(0);
    const revokedAt = Date.now();
    await within(events.ended, 5000, "the event stream");
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    expect(events.text()).toMatch(/"code":"token_revoked"/);
  });

  it("an expired token's streams end, saying it expired", async () => {
    const t = await e.mint(rw, { label: "expires", expiresInSeconds: 2 });
    const events = await follow(t);
    const running = await execStream(t, "sleep 33", { kill_on_disconnect: true });
    await within(Promise.all([events.ended, running.ended]), 2000 + 5000, "the streams");
    expect(events.text()).toMatch(
      /event: error\ndata: \{"detail":"The token this stream was opened with expired[^\n]*","code":"token_expired"\}/,
    );
    expect(running.text()).toMatch(/"is_final":true,"error":"[^"]*expired[^"]*","code":"token_expired"/);
    // kill_on_disconnect: the engine ending the stream counts as the client leaving.
    await eventually(async () =>
      expect((await exec(e, sbx, "ps -eo args= | grep -c '^sleep 33$' || true")).stdout.trim()).toBe("0"),
    );
  });

  it("a build log followed live ends when its token is revoked", async () => {
    const t = await e.mint(rw, { label: "follows-a-build" });
    const tmpl = await createTemplate(e, { name: "slow-build", steps: ["echo started; sleep 60"] });
    const logs = await open(t, `/templates/${tmpl.id}/logs?follow=true`, { accept: "text/event-stream" });
    expect(logs.status).toBe(200);
    await revoke("follows-a-build");
    await within(logs.ended, 1000, "the build log");
    expect(logs.text()).toMatch(/event: error\ndata: \{[^\n]*"code":"token_revoked"\}\n\n$/);
    expect((await e.api("DELETE", `/templates/${tmpl.id}`)).status).toBe(204);
  });
});

describe("open streams are capped per token and per account", () => {
  it("a fourth stream of one token is 429 too_many_streams, whatever kind; closing one makes room", async () => {
    const t = await e.mint(rw, { label: "cap-token" });
    const three = [await follow(t), await follow(t), await follow(t)];
    for (const s of three) expect(s.status).toBe(200);

    const fourth = await follow(t);
    expect([fourth.status, fourth.body.code]).toEqual([429, "too_many_streams"]);
    expect(fourth.retryAfter).toBe("5");
    expect(fourth.body).toMatchObject({ max_streams_per_token: 3, retry_after_seconds: 5 });
    expect(fourth.body.detail).toMatch(/^This token already has 3 streams open/);
    const streamed = await execStream(t, "echo hi");
    expect([streamed.status, streamed.body.code]).toEqual([429, "too_many_streams"]);
    const pty = await e.api("POST", `/sandboxes/${sbx}/pty`, {}, { token: t });
    expect(pty.status).toBe(201);
    expect(await refusedUpgrade(t, pty.body.ws_path)).toMatchObject({
      status: 429,
      body: { code: "too_many_streams" },
    });
    // Requests that do not stream are not counted.
    expect((await e.api("GET", `/sandboxes/${sbx}/events`, undefined, { token: t })).status).toBe(200);

    three[0]!.close();
    await eventually(async () => expect((await follow(t)).status).toBe(200));
    expect((await follow(t)).status).toBe(429);
    await e.api("DELETE", `/sandboxes/${sbx}/pty/${pty.body.id}`);
  });

  it("an account's tokens together hold at most 5; another account is not held back", async () => {
    const a = await e.mint(rw, { label: "cap-a" });
    const b = await e.mint(rw, { label: "cap-b" });
    const c = await e.mint(rw, { label: "cap-c" });
    for (const token of [a, a, a, b, b]) expect((await follow(token)).status).toBe(200);
    const sixth = await follow(c);
    expect([sixth.status, sixth.body.code]).toEqual([429, "too_many_streams"]);
    expect(sixth.body).toMatchObject({ max_streams_per_account: 5 });
    expect(sixth.body.detail).toMatch(/^This account's tokens already have 5 streams open/);

    const other = await e.mint(rw, { label: "cap-other", account: "other-team" });
    const theirs = await e.api("POST", "/sandboxes", { template: "python-3.12" }, { token: other });
    expect(theirs.status, theirs.text).toBe(201);
    expect((await follow(other, theirs.body.id)).status).toBe(200);
    await e.api("DELETE", `/sandboxes/${theirs.body.id}`, undefined, { token: other });
  });

  it("every slot comes back: streams that end by themselves, by the client, by a close or a revocation", async () => {
    const t = await e.mint(rw, { label: "cap-exact" });
    // Ended by the engine when the command finishes, one after another, twice the cap.
    for (let i = 0; i < 6; i++) {
      const s = await execStream(t, `echo ${i}`);
      expect(s.status).toBe(200);
      await within(s.ended, 10_000, "an exec stream");
    }
    // Closed by the client: N closed, N open again, and the cap still holds after.
    for (let round = 0; round < 3; round++) {
      // The engine hears a client's close a moment after the client made it (the previous
      // round's): wait until all three slots are back, then the cap must hold exactly.
      const held = await eventually(async () => {
        const opened = [await follow(t), await follow(t), await follow(t)];
        if (opened.every((s) => s.status === 200)) return opened;
        for (const s of opened) s.close();
        throw new Error(`slots not back yet: ${opened.map((s) => s.status).join(", ")}`);
      });
      expect((await follow(t)).status).toBe(429);
      for (const s of held) s.close();
      await eventually(async () => {
        const probe = [await follow(t), await follow(t), await follow(t)];
        try {
          expect(probe.map((s) => s.status)).toEqual([200, 200, 200]);
        } finally {
          for (const s of probe) s.close();
        }
      });
    }
    // Terminals count too, and give their slot back when the viewer leaves.
    const term = await terminal(t);
    const two = [await follow(t), await follow(t)];
    expect((await follow(t)).status).toBe(429);
    term.ws.close();
    await term.closed;
    await eventually(async () => expect((await follow(t)).status).toBe(200));
    for (const s of two) s.close();
    await e.api("DELETE", `/sandboxes/${sbx}/pty/${term.pty.id}`);

    // A revocation gives the account's slots back with its token's streams.
    const gone = await e.mint(rw, { label: "cap-revoked" });
    const three = [await follow(gone), await follow(gone), await follow(gone)];
    for (const s of three) expect(s.status).toBe(200);
    await revoke("cap-revoked");
    await Promise.all(three.map((s) => within(s.ended, 1000, "a revoked stream")));
    const next = await e.mint(rw, { label: "cap-after" });
    // (Streams closed by the client above are heard a moment later; the revoked ones are gone already.)
    await eventually(async () => {
      const after = [await follow(next), await follow(next), await follow(next)];
      try {
        expect(after.map((s) => s.status)).toEqual([200, 200, 200]);
      } finally {
        for (const s of after) s.close();
      }
    });
  });
});

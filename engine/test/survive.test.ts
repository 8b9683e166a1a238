import fs from "node:fs";
import path from "node:path";
import WebSocket from "ws";
import { afterAll, describe, expect, it } from "vitest";
import { waitUntil } from "./helpers/async.js";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { hostRequest, previewHostOf, serveInSandbox } from "./helpers/previews.js";

/**
 * Sandboxes outlive the engine process (runtime/holder.ts): a SIGKILLed engine's sandboxes are
 * adopted by the next engine on the same data dir, and only the request that was in flight fails.
 */

const uidBase = 9_000_000 + (process.pid % 100) * 10_000;
const env = { ORKESTR_ENGINE_UID_BASE: String(uidBase) };
const engines: EngineHandle[] = [];

async function boot(dataDir?: string): Promise<EngineHandle> {
  const e = await startEngine({ dataDir, env });
  engines.push(e);
  return e;
}

/** SIGKILL to the engine process itself (not its launcher, whose death would SIGTERM it). */
async function crash(e: EngineHandle): Promise<void> {
  const exited = new Promise<void>((r) => (e.proc!.exitCode !== null ? r() : e.proc!.once("exit", () => r())));
  process.kill(e.enginePid!, "SIGKILL");
  await exited;
}

interface Record {
  holderPid: number;
  holderStart: string;
  initPid: number;
  initStart: string;
}
const recordPath = (e: EngineHandle, id: string) => path.join(e.dataDir!, "engine", "holders", `${id}.json`);
const readRecord = (e: EngineHandle, id: string) => JSON.parse(fs.readFileSync(recordPath(e, id), "utf8")) as Record;
const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

/** A terminal viewer that keeps all output it received. */
async function attach(
  e: EngineHandle,
  wsPath: string,
): Promise<{ ws: WebSocket; out: () => string; closed: Promise<void> }> {
  const ws = new WebSocket(`${e.origin.replace(/^http/, "ws")}${wsPath}`, {
    headers: { authorization: `Bearer ${e.token}` },
  });
  let out = "";
  ws.on("message", (d, binary) => {
    if (binary) out += Buffer.from(d as Buffer).toString();
  });
  ws.on("error", () => undefined);
  const closed = new Promise<void>((r) => ws.once("close", () => r()));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("unexpected-response", (_q, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return { ws, out: () => out, closed };
}

afterAll(async () => {
  // SIGTERM terminates every sandbox, adopted ones included: nothing outlives the test run.
  for (const e of engines) await e.stop();
  // A test that failed between a crash and the restart left sandboxes without an engine: one more
  // engine on that data dir adopts or reaps them, and its SIGTERM ends them.
  for (const dir of new Set(engines.map((e) => e.dataDir!))) {
    const holders = path.join(dir, "engine", "holders");
    if (fs.existsSync(holders) && fs.readdirSync(holders).some((n) => n.endsWith(".json")))
      await (await startEngine({ dataDir: dir, env })).stop();
  }
}, 120_000);

describe("sandboxes survive an engine crash", () => {
  it("a SIGKILLed engine's sandboxes are adopted: running, background process alive, files intact; the interrupted stream fails cleanly", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const paused = await createSandbox(a);
    const bg = (await exec(a, id, "nohup sleep 1000 >/dev/null 2>&1 & echo $!")).stdout.trim();
    await exec(a, id, "echo intact > /workspace/f");
    await exec(a, paused, "echo paused-file > /workspace/p");
    expect((await a.api("POST", `/sandboxes/${paused}/pause`)).status).toBe(200);

    // A streaming exec in flight when the engine dies.
    const res = await fetch(`${a.url}/sandboxes/${id}/exec/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${a.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "echo started; sleep 30; echo finished" }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("started")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString();
    }
    expect(seen).toContain("started");
    const holder = readRecord(a, id).holderPid;
    await crash(a);
    // The client learns the stream broke: the body errors or ends without an exit frame.
    let rest = "";
    let broke = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += Buffer.from(value).toString();
      }
    } catch {
      broke = true;
    }
    expect(broke || !/exit/.test(rest)).toBe(true);
    expect(rest).not.toContain("finished");
    expect(alive(holder)).toBe(true);

    const b = await boot(a.dataDir!);
    const got = await b.api("GET", `/sandboxes/${id}`);
    expect(got.body.status).toBe("running");
    const check = await exec(b, id, `kill -0 ${bg} && echo alive; cat /workspace/f`);
    expect(check.stdout).toBe("alive\nintact\n");
    expect((await b.api("GET", `/sandboxes/${paused}`)).body.status).toBe("paused");
    expect((await b.api("POST", `/sandboxes/${paused}/resume`)).status).toBe(200);
    expect((await exec(b, paused, "cat /workspace/p")).stdout).toBe("paused-file\n");
    expect(b.log()).not.toMatch(/marked failed/);
    const events = (await b.api("GET", `/sandboxes/${id}/events`)).body.map((x: { type: string }) => x.type);
    expect(events).toContain("sandbox.adopted");

    // Terminating an adopted sandbox ends its holder and leaves no record behind.
    expect((await b.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    expect(await waitUntil(() => !alive(holder), 5000)).toBe(true);
    expect(fs.existsSync(recordPath(b, id))).toBe(false);
  }, 120_000);

  it("restricted and open networks keep working after the restart", async () => {
    const a = await boot();
    const restricted = await createSandbox(a, { network: "restricted", allow_domains: ["example.com"] });
    const open = await createSandbox(a, { network: "open" });
    await serveInSandbox(a, open, 8000, "kept");
    expect((await hostRequest(a, previewHostOf(a, open, 8000), "/")).body).toContain("kept");
    const slirp = (JSON.parse(fs.readFileSync(recordPath(a, open), "utf8")) as { helpers: { pid: number }[] })
      .helpers[0]!.pid;
    await crash(a);
    const b = await boot(a.dataDir!);
    expect((await b.api("GET", `/sandboxes/${restricted}`)).body.status).toBe("running");
    // The new engine's proxy answers through the relay that stayed in the sandbox: a host off the
    // allow-list is refused by the proxy (403), which only a live proxy can say.
    const probe = await exec(
      b,
      restricted,
      `python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT not-allowed.invalid:443 HTTP/1.1\\r\\nHost: not-allowed.invalid:443\\r\\n\\r\\n')
print(s.recv(100).split(b'\\r\\n')[0].decode())
"`,
    );
    expect(probe.stdout).toMatch(/^HTTP\/1\.[01] 403/);
    expect((await b.api("GET", `/sandboxes/${open}`)).body.status).toBe("running");
    // The same slirp4netns still serves it (it was not restarted), and its tap device is up.
    expect(alive(slirp)).toBe(true);
    expect((await exec(b, open, "grep -c tap0: /proc/net/dev")).stdout).toBe("1\n");
    // Previews: the server started before the crash answers through a relay of the new engine.
    expect((await hostRequest(b, previewHostOf(b, open, 8000), "/")).body).toContain("kept");
  }, 120_000);
});

describe("warm pool", () => {
  it("a sandbox claimed from the warm pool is adopted with the environment its claim gave it", async () => {
    const pool = { ...env, ORKESTR_ENGINE_POOL_SIZE: "1", ORKESTR_ENGINE_POOL_TEMPLATES: "python-3.12" };
    const a = await startEngine({ env: pool });
    engines.push(a);
    for (let i = 0; i < 600 && (await a.api("GET", "/limits")).body.warm_pool.ready !== 1; i++)
      await new Promise((r) => setTimeout(r, 100));
    const id = await createSandbox(a, { env: { CLAIMED_BY: "alice" } });
    const created = (await a.api("GET", `/sandboxes/${id}/events`)).body.find(
      (x: { type: string }) => x.type === "sandbox.created",
    );
    expect(created.data.start).toBe("warm");
    await crash(a);
    const b = await startEngine({ env: pool, dataDir: a.dataDir! });
    engines.push(b);
    expect((await b.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
    expect((await exec(b, id, "echo $CLAIMED_BY")).stdout).toBe("alice\n");
  }, 120_000);
});

describe("terminals survive an engine crash", () => {
  it("an open terminal session is there after the restart, and reattaching shows its scrollback", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const open = await a.api("POST", `/sandboxes/${id}/pty`, { command: "/bin/sh", cols: 100, rows: 30 });
    expect(open.status).toBe(201);
    const pty = open.body as { id: string; ws_path: string };
    const t1 = await attach(a, pty.ws_path);
    t1.ws.send(Buffer.from("echo marker-$((6*7))\n"));
    expect(await waitUntil(() => t1.out().includes("marker-42"), 15_000)).toBe(true);
    expect((await a.api("POST", `/sandboxes/${id}/pty/${pty.id}/resize`, { cols: 120, rows: 40 })).status).toBe(200);
    await crash(a);
    await t1.closed;

    const b = await boot(a.dataDir!);
    const list = (await b.api("GET", `/sandboxes/${id}/pty`)).body as { id: string; status: string; cols: number }[];
    expect(list.map((x) => [x.id, x.status, x.cols])).toEqual([[pty.id, "running", 120]]);
    const t2 = await attach(b, pty.ws_path);
    // The scrollback of before the crash, replayed by the session's holder...
    expect(await waitUntil(() => t2.out().includes("marker-42"), 15_000)).toBe(true);
    // ...and the same shell, still reading its terminal.
    t2.ws.send(Buffer.from("echo after-$((7*8)); stty size\n"));
    expect(await waitUntil(() => t2.out().includes("after-56"), 15_000)).toBe(true);
    expect(await waitUntil(() => t2.out().includes("40 120"), 15_000)).toBe(true);
    t2.ws.close();
  }, 120_000);

  it("a terminal holder that cannot be taken over is ended, not left with a shell nothing reaches", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const open = await a.api("POST", `/sandboxes/${id}/pty`, { command: "/bin/sh", cols: 80, rows: 24 });
    expect(open.status).toBe(201);
    const pty = open.body as { id: string };
    const file = path.join(a.dataDir!, "engine", "holders", `${pty.id}.pty.json`);
    expect(await waitUntil(() => fs.existsSync(file), 5000)).toBe(true);
    const rec = JSON.parse(fs.readFileSync(file, "utf8")) as { holderPid: number; childPid: number };
    await crash(a);
    // The holder answers with another session leader than the record names: not this terminal.
    fs.writeFileSync(file, JSON.stringify({ ...rec, childPid: rec.childPid + 100_000 }));
    const b = await boot(a.dataDir!);
    expect(((await b.api("GET", `/sandboxes/${id}`)).body as { status: string }).status).toBe("running");
    expect((await b.api("GET", `/sandboxes/${id}/pty`)).body).toEqual([]);
    expect(await waitUntil(() => !alive(rec.holderPid), 5000)).toBe(true);
  }, 120_000);
});

describe("engine stops", () => {
  it("SIGUSR2 (an upgrade) stops the engine and keeps its sandboxes for the next one", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const holder = readRecord(a, id).holderPid;
    expect(await a.stop("SIGUSR2")).toBe(0);
    expect(alive(holder)).toBe(true);
    const b = await boot(a.dataDir!);
    expect((await b.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
    expect((await exec(b, id, "echo still-here")).stdout).toBe("still-here\n");
  }, 120_000);

  it("SIGTERM still terminates every sandbox when the engine's log reader is gone (no crash on EPIPE)", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const holder = readRecord(a, id).holderPid;
    // The reader of the engine's stdout and stderr goes away, like a test runner that died.
    a.proc!.stdout!.destroy();
    a.proc!.stderr!.destroy();
    expect(await a.stop("SIGTERM")).toBe(0);
    expect(await waitUntil(() => !alive(holder), 5000)).toBe(true);
    expect(fs.readdirSync(path.join(a.dataDir!, "engine", "holders"))).toEqual([]);
  }, 60_000);

  it("a holder that dies while the engine runs fails its sandbox, as a dead init did", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    process.kill(readRecord(a, id).holderPid, "SIGKILL");
    let row: { status: string; status_reason: string | null } = { status: "", status_reason: null };
    for (let i = 0; i < 200 && row.status !== "failed"; i++) {
      row = (await a.api("GET", `/sandboxes/${id}`)).body;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(row.status).toBe("failed");
    expect(row.status_reason).toMatch(/sandbox init killed by SIGKILL|holder/);
  }, 60_000);
});

describe("what is not adopted", () => {
  it("a sandbox whose holder died while the engine was down is failed with the reason", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const rec = readRecord(a, id);
    await crash(a);
    process.kill(rec.holderPid, "SIGKILL");
    expect(await waitUntil(() => !alive(rec.holderPid), 5000)).toBe(true);
    const b = await boot(a.dataDir!);
    const row = (await b.api("GET", `/sandboxes/${id}`)).body;
    expect(row.status).toBe("failed");
    expect(row.status_reason ?? JSON.stringify(row)).toMatch(/ended while the engine was down|holder/);
    // Nothing of it is left running: bwrap died with its holder, the cgroup took the rest.
    expect(await waitUntil(() => !alive(rec.initPid), 5000)).toBe(true);
  }, 120_000);

  it("a recorded pid that now names another process is never adopted (start times differ)", async () => {
    const a = await boot();
    const id = await createSandbox(a);
    const rec = readRecord(a, id);
    await crash(a);
    // As if the init had died and its pid were reused by a stranger: same pid, another start time.
    fs.writeFileSync(recordPath(a, id), JSON.stringify({ ...rec, initStart: String(Number(rec.initStart) + 1) }));
    const b = await boot(a.dataDir!);
    const row = (await b.api("GET", `/sandboxes/${id}`)).body;
    expect(row.status).toBe("failed");
    expect(row.status_reason ?? "").toMatch(/init process is gone/);
    // The holder that could not be trusted is ended rather than left running.
    expect(await waitUntil(() => !alive(rec.holderPid), 5000)).toBe(true);
  }, 120_000);
});

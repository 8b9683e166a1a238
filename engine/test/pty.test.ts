import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { eventually } from "./helpers/async.js";

interface PtyView {
  id: string;
  sandbox_id: string;
  status: "running" | "exited";
  cols: number;
  rows: number;
  ws_path: string;
  created_at: string;
  viewers: number;
  exit_code: number | null;
  signal: string | null;
}

interface ExitFrame {
  type: "exit";
  exit_code: number;
  signal: string | null;
}

/** A WebSocket viewer of a session that keeps everything it received. */
class Term {
  private decoder = new StringDecoder("utf8");
  private out = "";
  private waiters: (() => void)[] = [];
  readonly frames: Buffer[] = [];
  readonly controls: Record<string, unknown>[] = [];
  readonly exit: Promise<ExitFrame>;
  readonly closed: Promise<number>;

  constructor(readonly ws: WebSocket) {
    let onExit!: (f: ExitFrame) => void;
    this.exit = new Promise((r) => (onExit = r));
    this.closed = new Promise((r) => ws.once("close", (code) => r(code)));
    ws.on("message", (data, isBinary) => {
      const buf = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (isBinary) {
        this.frames.push(buf);
        this.out += this.decoder.write(buf);
      } else {
        const msg = JSON.parse(buf.toString("utf8")) as Record<string, unknown>;
        this.controls.push(msg);
        if (msg.type === "exit") onExit(msg as unknown as ExitFrame);
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Current output length: pass to waitFor to ignore what came before. */
  mark(): number {
    return this.out.length;
  }

  text(since = 0): string {
    return this.out.slice(since);
  }

  async waitFor(re: RegExp, since = 0, ms = 15_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = this.out.slice(since).match(re);
      if (m) return m;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out waiting for ${re}; output so far:\n${JSON.stringify(this.out.slice(since))}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  /** Keystrokes as a binary frame. */
  type(s: string): void {
    this.ws.send(Buffer.from(s, "utf8"));
  }

  control(msg: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(msg));
  }

  close(): void {
    this.ws.close();
  }
}

let e: EngineHandle;
let sbx: string;
const open: Term[] = [];

function wsUrl(path: string): string {
  return e.origin.replace(/^http/, "ws") + path;
}

function attach(path: string, token: string | null = e.token): Promise<Term> {
  const ws = new WebSocket(wsUrl(path), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const term = new Term(ws);
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      open.push(term);
      resolve(term);
    });
    ws.once("unexpected-response", (_req, res) => reject(new Error(`unexpected ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

/** The HTTP answer to an upgrade that is refused. */
function refused(path: string, token: string | null): Promise<{ status: number; body: { code?: string } }> {
  const ws = new WebSocket(wsUrl(path), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      ws.close();
      reject(new Error("upgrade was accepted"));
    });
    ws.once("unexpected-response", (req, res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || "{}") as { code?: string } });
      });
    });
    ws.once("error", () => undefined);
  });
}

async function openPty(id: string, body: Record<string, unknown> = {}): Promise<PtyView> {
  const r = await e.api<PtyView>("POST", `/sandboxes/${id}/pty`, body);
  if (r.status !== 201) throw new Error(`pty open failed: ${r.status} ${r.text}`);
  return r.body;
}

/** How many processes in the sandbox run exactly `cmdline` (args joined by spaces). */
async function countProcs(id: string, cmdline: string): Promise<number> {
  const r = await exec(
    e,
    id,
    `for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f" 2>/dev/null; echo; done | grep -cx '${cmdline} ' || true`,
  );
  return Number(r.stdout.trim());
}

/** Each process in the sandbox with its state and where it waits in the kernel: for a test that hung. */
async function processStates(id: string): Promise<string> {
  const r = await exec(
    e,
    id,
    `for p in /proc/[0-9]*; do echo "$(cat $p/comm 2>/dev/null) $(cut -d' ' -f3 $p/stat 2>/dev/null) $(cat $p/wchan 2>/dev/null)"; done`,
  );
  return r.stdout.trim();
}

beforeAll(async () => {
  e = await startEngine();
  sbx = await createSandbox(e);
});
afterAll(async () => {
  for (const t of open) t.ws.terminate();
  await e?.stop();
});

describe("pty sessions", () => {
  it("opens a session with defaults and lists it", async () => {
    const p = await openPty(sbx);
    expect(p.id).toMatch(/^pty_/);
    expect(p).toMatchObject({
      sandbox_id: sbx,
      cols: 80,
      rows: 24,
      status: "running",
      ws_path: `/v1/sandboxes/${sbx}/pty/${p.id}/ws`,
    });
    expect(Date.parse(p.created_at)).toBeGreaterThan(0);
    const list = await e.api<PtyView[]>("GET", `/sandboxes/${sbx}/pty`);
    expect(list.status).toBe(200);
    expect(list.body.map((s) => s.id)).toContain(p.id);
    expect((await e.api("DELETE", `/sandboxes/${sbx}/pty/${p.id}`)).status).toBe(204);
    await eventually(async () => {
      const events = await e.api<{ type: string; data: Record<string, unknown> }[]>(
        "GET",
        `/sandboxes/${sbx}/events?type=pty.open,pty.exit&limit=500`,
      );
      expect(events.body.find((ev) => ev.type === "pty.open" && ev.data.pty_id === p.id)?.data).toMatchObject({
        command: "/bin/bash -l",
      });
      expect(events.body.find((ev) => ev.type === "pty.exit" && ev.data.pty_id === p.id)?.data).toMatchObject({
        reason: "killed",
      });
    });
  });

  it("runs a login shell: arithmetic, a real /dev/pts tty, the sandbox user and a clean fd table", async () => {
    const p = await openPty(sbx);
    const t = await attach(p.ws_path);
    let m = t.mark();
    t.type("echo $((6*7))\r");
    await t.waitFor(/[\r\n]42\r\n/, m);
    // Typeahead is echoed by the sandbox's terminal and redrawn by readline, never by ours as well.
    expect(t.text().split("echo $((6*7))").length - 1).toBeLessThanOrEqual(2);
    m = t.mark();
    t.type("tty\r");
    await t.waitFor(/[\r\n]\/dev\/pts\/\d+\r\n/, m);
    m = t.mark();
    t.type("echo uid=$(id -u) cwd=$PWD term=$TERM\r");
    await t.waitFor(/[\r\n]uid=1000 cwd=\/workspace term=xterm-256color\r\n/, m);
    m = t.mark();
    // Nothing of the engine's descriptors may reach the sandbox: ls sees 0-2 and its own dir fd.
    t.type("echo fds=$(ls /proc/self/fd | tr '\\n' ,)\r");
    await t.waitFor(/[\r\n]fds=0,1,2,3,\r\n/, m);
    t.control({ type: "input", data: "exit\r" });
    expect(await t.exit).toEqual({ type: "exit", exit_code: 0, signal: null });
  });

  it("resizes through a control message and over REST", async () => {
    const p = await openPty(sbx, { cols: 100, rows: 30 });
    expect(p).toMatchObject({ cols: 100, rows: 30 });
    const t = await attach(p.ws_path);
    let m = t.mark();
    t.type("stty size\r");
    await t.waitFor(/[\r\n]30 100\r\n/, m);
    t.control({ type: "resize", cols: 132, rows: 43 });
    await new Promise((r) => setTimeout(r, 200));
    m = t.mark();
    t.type("stty size\r");
    await t.waitFor(/[\r\n]43 132\r\n/, m);
    const r = await e.api<PtyView>("POST", `/sandboxes/${sbx}/pty/${p.id}/resize`, { cols: 70, rows: 20 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ cols: 70, rows: 20 });
    await new Promise((res) => setTimeout(res, 200));
    m = t.mark();
    t.type("stty size\r");
    await t.waitFor(/[\r\n]20 70\r\n/, m);
    expect((await e.api("POST", `/sandboxes/${sbx}/pty/${p.id}/resize`, { cols: 0, rows: 20 })).status).toBe(422);
    expect((await e.api("POST", `/sandboxes/${sbx}/pty/${p.id}/resize`, { cols: 80, rows: 501 })).status).toBe(422);
    m = t.mark();
    t.control({ type: "resize", cols: 5000, rows: 1 });
    await eventually(async () => expect(t.controls.some((c) => c.type === "error")).toBe(true));
    t.type("exit\r");
    await t.exit;
  });

  it("SIGINT interrupts the foreground job and the shell survives", async () => {
    const p = await openPty(sbx);
    const t = await attach(p.ws_path);
    let m = t.mark();
    t.type("sleep 100\r");
    await eventually(async () => expect(await countProcs(sbx, "sleep 100")).toBe(1));
    const started = Date.now();
    const r = await e.api<{ delivered: boolean }>("POST", `/sandboxes/${sbx}/pty/${p.id}/signal`, { signal: "SIGINT" });
    expect(r.status).toBe(200);
    expect(r.body.delivered).toBe(true);
    await eventually(async () => expect(await countProcs(sbx, "sleep 100")).toBe(0));
    expect(Date.now() - started).toBeLessThan(10_000);
    m = t.mark();
    t.type("echo alive-$((20+2))\r");
    await t.waitFor(/[\r\n]alive-22\r\n/, m);
    // The same over the socket, with the short signal name.
    t.type("sleep 100\r");
    await eventually(async () => expect(await countProcs(sbx, "sleep 100")).toBe(1));
    t.control({ type: "signal", signal: "INT" });
    await eventually(async () => expect(await countProcs(sbx, "sleep 100")).toBe(0));
    m = t.mark();
    t.type("echo still-$((40+4))\r");
    await t.waitFor(/[\r\n]still-44\r\n/, m);
    expect((await e.api<PtyView>("GET", `/sandboxes/${sbx}/pty/${p.id}`)).body.status).toBe("running");
    expect((await e.api("POST", `/sandboxes/${sbx}/pty/${p.id}/signal`, { signal: "SIGSEGV" })).status).toBe(422);
    t.type("exit\r");
    await t.exit;
  });

  it("reports the exit code in a final frame, then closes with 1000", async () => {
    const p = await openPty(sbx);
    const t = await attach(p.ws_path);
    t.type("exit 3\r");
    expect(await t.exit).toEqual({ type: "exit", exit_code: 3, signal: null });
    expect(await t.closed).toBe(1000);
    const v = await e.api<PtyView>("GET", `/sandboxes/${sbx}/pty/${p.id}`);
    expect(v.body).toMatchObject({ status: "exited", exit_code: 3, signal: null });
    expect((await e.api("POST", `/sandboxes/${sbx}/pty/${p.id}/resize`, { cols: 80, rows: 24 })).status).toBe(404);
    // A late viewer still gets how it ended.
    const late = await attach(p.ws_path);
    expect(await late.exit).toMatchObject({ exit_code: 3 });
  });

  it("runs a given command in a given cwd with extra env", async () => {
    const p = await openPty(sbx, {
      command: 'echo "[$GREETING|$PWD|$ORKESTR_SANDBOX_ID]"; exit 7',
      cwd: "/tmp",
      env: { GREETING: "hi there" },
    });
    const t = await attach(p.ws_path);
    await t.waitFor(new RegExp(`\\[hi there\\|/tmp\\|${sbx}\\]`));
    expect(await t.exit).toMatchObject({ exit_code: 7 });
    const bad = await openPty(sbx, { command: "true", cwd: "/does/not/exist" });
    const t2 = await attach(bad.ws_path);
    expect(await t2.exit).toMatchObject({ exit_code: 126 });
  });

  it("hands the environment over exactly, without exposing it to the host", async () => {
    const marker = path.join(os.tmpdir(), `baton-pty-bash-env-${process.pid}-${Date.now()}`);
    const hook = `${marker}.sh`;
    fs.writeFileSync(hook, `touch ${marker}\n`);
    const secret = `s3cret-${Date.now()}`;
    const env: Record<string, string> = {
      QUOTES: `it's "quoted" $(id) \`id\` \\ $HOME\nsecond line`,
      EMOJI: "😀".repeat(15_000),
      BIG: "x".repeat(30_000),
      SECRET: secret,
      // Would run as root in a host-side bash if caller env leaked there.
      BASH_ENV: hook,
    };
    const p = await openPty(sbx, { command: "sleep 60", env });
    try {
      // Nothing on the host carries the secret in its argv.
      const hits: number[] = [];
      for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
        const cmd = (() => {
          try {
            return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
          } catch {
            return "";
          }
        })();
        if (cmd.includes(secret) && !cmd.includes("vitest")) hits.push(Number(pid));
      }
      expect(hits).toEqual([]);
      const t = await attach(
        (
          await openPty(sbx, {
            command:
              "for v in QUOTES EMOJI BIG SECRET BASH_ENV; do printf '%s' \"$(printenv $v)\" | sha256sum; done; echo env-done",
            env,
          })
        ).ws_path,
      );
      await t.waitFor(/env-done/);
      const sums = [...t.text().matchAll(/([0-9a-f]{64}) {2}-/g)].map((m) => m[1]);
      const sha = (v: string) => createHash("sha256").update(v.replace(/\n+$/, "")).digest("hex");
      expect(sums).toEqual([env.QUOTES, env.EMOJI, env.BIG, env.SECRET, env.BASH_ENV].map((v) => sha(v!)));
      expect(fs.existsSync(marker)).toBe(false);
      const nul = await e.api("POST", `/sandboxes/${sbx}/pty`, { env: { A: "x\u0000y" } });
      expect(nul.status).toBe(422);
    } finally {
      await e.api("DELETE", `/sandboxes/${sbx}/pty/${p.id}`);
      fs.rmSync(hook, { force: true });
      fs.rmSync(marker, { force: true });
    }
  });

  it("replays output produced before anyone attached, capped to the last 64 KiB", async () => {
    const p = await openPty(sbx, { command: "echo early-$((2*5)); sleep 60" });
    await new Promise((r) => setTimeout(r, 1000));
    const t = await attach(p.ws_path);
    await t.waitFor(/early-10/);
    const big = await openPty(sbx, { command: "seq 1 40000; echo done-seq; sleep 60" });
    await new Promise((r) => setTimeout(r, 1500));
    const t2 = await attach(big.ws_path);
    await t2.waitFor(/done-seq/);
    expect(t2.frames[0]!.length).toBeLessThanOrEqual(64 * 1024);
    expect(t2.frames[0]!.length).toBeGreaterThan(60 * 1024);
    expect(t2.text()).not.toMatch(/^1\r\n2\r\n/);
    expect(t2.text()).toMatch(/\r\n39999\r\n40000\r\n/);
    for (const s of [p, big]) expect((await e.api("DELETE", `/sandboxes/${sbx}/pty/${s.id}`)).status).toBe(204);
    await t.exit;
    await t2.exit;
  });

  it("feeds several viewers at once", async () => {
    const p = await openPty(sbx);
    const a = await attach(p.ws_path);
    const b = await attach(p.ws_path);
    expect((await e.api<PtyView>("GET", `/sandboxes/${sbx}/pty/${p.id}`)).body.viewers).toBe(2);
    const ma = a.mark();
    const mb = b.mark();
    b.type("echo both-$((3*3))\r");
    await a.waitFor(/[\r\n]both-9\r\n/, ma);
    await b.waitFor(/[\r\n]both-9\r\n/, mb);
    a.close();
    await eventually(async () =>
      expect((await e.api<PtyView>("GET", `/sandboxes/${sbx}/pty/${p.id}`)).body.viewers).toBe(1),
    );
    b.type("exit\r");
    await b.exit;
  });

  it("a big paste to a program that does not read it leaves the terminal answering", async () => {
    const p = await openPty(sbx);
    const t = await attach(p.ws_path);
    let m = t.mark();
    // Writes to the terminal all the time and never reads it.
    t.type("while :; do echo out; done\r");
    await t.waitFor(/out\r\nout\r\n/, m);
    // 1 MiB in one frame: far more than the terminal's input buffers hold. (No newline: with one,
    // the line discipline would hold the rest back until the program reads, as on any terminal.)
    t.type("x".repeat(1024 * 1024));
    await new Promise((r) => setTimeout(r, 2000));
    // Output still flows while the paste waits...
    m = t.mark();
    await t.waitFor(/(out\r\n){20}/, m, 60_000);
    // ...Ctrl-C, typed after the paste, reaches the loop (and drops the pasted line)...
    t.type("\x03");
    await eventually(
      async () => {
        const quiet = t.mark();
        await new Promise((r) => setTimeout(r, 500));
        expect(t.text(quiet)).not.toMatch(/out\r\nout\r\n/);
      },
      { timeout: 60_000 },
    );
    // ...and the shell reads its terminal again.
    m = t.mark();
    t.type("echo alive-$((20+3))\r");
    await t.waitFor(/[\r\n]alive-23\r\n/, m, 60_000);
    t.type("exit\r");
    await t.exit;
  }, 120_000);

  it("a paste the program reads only later arrives whole, and the terminal takes input after it", async () => {
    const p = await openPty(sbx, {
      command: "stty -icanon -echo; echo ready; sleep 3; head -c 4194304 | wc -c; read -r l; echo got-$l",
    });
    const t = await attach(p.ws_path);
    await t.waitFor(/ready/);
    // 4 MiB while the program does not read: the engine holds its viewers back whenever the holder
    // is behind (pty/session.ts holdInput), and nothing may be lost or reordered on the way.
    for (let i = 0; i < 4; i++) t.type("y".repeat(1024 * 1024));
    t.type("after\n");
    try {
      await t.waitFor(/[\r\n]4194304\r\n/, 0, 60_000);
    } catch (err) {
      // Once in a few full runs this hung; where each process waits says which side lost the paste.
      throw new Error(`${(err as Error).message}\nprocesses (comm state wchan):\n${await processStates(sbx)}`);
    }
    await t.waitFor(/[\r\n]got-after\r\n/, 0, 60_000);
    expect(await t.exit).toMatchObject({ exit_code: 0 });
  }, 90_000);

  it("holds the program back while a viewer lags, and loses nothing", async () => {
    const p = await openPty(sbx);
    const t = await attach(p.ws_path);
    const m = t.mark();
    t.type("echo ready-$((5+5))\r");
    await t.waitFor(/[\r\n]ready-10\r\n/, m);
    // Stop reading on the client: the engine's send buffer fills and it must stop reading the pty.
    const sock = (t.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    sock.pause();
    const m2 = t.mark();
    t.type("yes abcdefghij | head -n 1500000; echo end-$((6+6))\r");
    await new Promise((r) => setTimeout(r, 2500));
    expect(await countProcs(sbx, "head -n 1500000")).toBe(1);
    sock.resume();
    await t.waitFor(/[\r\n]end-12\r\n/, m2, 60_000);
    expect(t.text(m2).split("abcdefghij\r\n").length - 1).toBe(1_500_000);
    t.type("exit\r");
    await t.exit;
  }, 90_000);

  it("DELETE kills the session and what it started", async () => {
    const p = await openPty(sbx, { command: "sleep 1234 & sleep 4321" });
    const t = await attach(p.ws_path);
    await eventually(async () => expect(await countProcs(sbx, "sleep 1234")).toBe(1));
    expect((await e.api("DELETE", `/sandboxes/${sbx}/pty/${p.id}`)).status).toBe(204);
    const f = await t.exit;
    expect(f.signal === "SIGHUP" || f.signal === "SIGKILL" || f.exit_code !== 0).toBe(true);
    await eventually(async () => {
      expect(await countProcs(sbx, "sleep 1234")).toBe(0);
      expect(await countProcs(sbx, "sleep 4321")).toBe(0);
    });
    expect((await e.api("DELETE", `/sandboxes/${sbx}/pty/pty_nope`)).status).toBe(404);
  });

  it("caps open sessions per sandbox", async () => {
    const id = await createSandbox(e);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await openPty(id, { command: "sleep 300" })).id);
    const r = await e.api<{ code: string }>("POST", `/sandboxes/${id}/pty`, { command: "sleep 300" });
    expect(r.status).toBe(429);
    expect(r.body.code).toBe("rate_limited");
    expect((await e.api("DELETE", `/sandboxes/${id}/pty/${ids[0]}`)).status).toBe(204);
    await eventually(async () =>
      expect(
        (await e.api<PtyView[]>("GET", `/sandboxes/${id}/pty`)).body.filter((s) => s.status === "running"),
      ).toHaveLength(15),
    );
    expect((await e.api("POST", `/sandboxes/${id}/pty`, { command: "sleep 300" })).status).toBe(201);
    await e.api("DELETE", `/sandboxes/${id}`);
  });

  it("validates the open body", async () => {
    for (const body of [
      { cols: 0 },
      { rows: 501 },
      { cols: 1001 },
      { cwd: "relative" },
      { command: "" },
      { env: { "BAD-NAME": "x" } },
    ]) {
      const r = await e.api<{ code: string }>("POST", `/sandboxes/${sbx}/pty`, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
    expect((await e.api("POST", `/sandboxes/sbx_nope/pty`, {})).status).toBe(404);
  });
});

describe("pty websocket auth", () => {
  let path: string;
  let ptyId: string;
  beforeAll(async () => {
    const p = await openPty(sbx, { command: "sleep 300" });
    path = p.ws_path;
    ptyId = p.id;
  });
  afterAll(async () => {
    await e.api("DELETE", `/sandboxes/${sbx}/pty/${ptyId}`);
  });

  it("needs a token", async () => {
    const r = await refused(path, null);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthorized");
    expect((await refused(path, "ork_not_a_real_token")).status).toBe(401);
  });

  it("needs sandboxes:write", async () => {
    const readOnly = await e.mint(["sandboxes:read"]);
    const r = await refused(path, readOnly);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("insufficient_scope");
    // Reading the list is fine with it; opening is not.
    expect((await e.api("GET", `/sandboxes/${sbx}/pty`, undefined, { token: readOnly })).status).toBe(200);
    expect((await e.api("POST", `/sandboxes/${sbx}/pty`, {}, { token: readOnly })).status).toBe(403);
  });

  it("404s unknown sessions and sandboxes", async () => {
    const r = await refused(`/v1/sandboxes/${sbx}/pty/pty_01NOPE/ws`, e.token);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("session_not_found");
    expect((await refused(`/v1/sandboxes/sbx_nope/pty/${ptyId}/ws`, e.token)).body.code).toBe("sandbox_not_found");
    // Another sandbox's session is not reachable through this one.
    const other = await createSandbox(e);
    expect((await refused(`/v1/sandboxes/${other}/pty/${ptyId}/ws`, e.token)).status).toBe(404);
    await e.api("DELETE", `/sandboxes/${other}`);
  });

  it("answers a plain GET on the socket path, and other upgrade requests as plain HTTP", async () => {
    expect((await e.api("GET", path.replace(/^\/v1/, ""))).status).toBe(400);
    const r = await fetch(`${e.url}/sandboxes/${sbx}`, {
      headers: { authorization: `Bearer ${e.token}`, connection: "upgrade", upgrade: "h2c" },
    }).catch(() => null);
    // fetch (undici) refuses to send Upgrade itself; a raw request proves the engine answers it.
    if (r) expect(r.status).toBe(200);
    const net = await import("node:net");
    const port = Number(new URL(e.origin).port);
    const raw = await new Promise<string>((resolve, reject) => {
      const s = net.connect(port, "127.0.0.1", () => {
        s.write(
          `GET /v1/sandboxes/${sbx} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${e.token}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n`,
        );
      });
      let text = "";
      s.on("data", (d) => (text += d.toString()));
      s.on("end", () => resolve(text));
      s.on("error", reject);
      setTimeout(() => (s.destroy(), resolve(text)), 5000);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 200/);
    expect(raw).toContain(`"id":"${sbx}"`);
  });
});

describe("pty lifecycle", () => {
  it("fails to open in a paused sandbox, like exec", async () => {
    const id = await createSandbox(e);
    const pause = await e.api("POST", `/sandboxes/${id}/pause`);
    if (pause.status !== 200) return; // no freezer on this machine
    const r = await e.api<{ code: string }>("POST", `/sandboxes/${id}/pty`, {});
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("sandbox_paused");
    await e.api("DELETE", `/sandboxes/${id}`);
  });

  it("ends sessions when their sandbox is terminated", async () => {
    const id = await createSandbox(e);
    const p = await openPty(id);
    const t = await attach(p.ws_path);
    const m = t.mark();
    t.type("echo up-$((1+1))\r");
    await t.waitFor(/[\r\n]up-2\r\n/, m);
    expect((await e.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    const f = await t.exit;
    expect(f.exit_code).not.toBe(0);
    expect(await t.closed).toBe(1000);
    await eventually(async () => {
      const list = await e.api<PtyView[]>("GET", `/sandboxes/${id}/pty`);
      expect(list.body.every((s) => s.status === "exited")).toBe(true);
    });
    const events = await e.api<{ type: string; data: Record<string, unknown> }[]>(
      "GET",
      `/sandboxes/${id}/events?type=pty.exit`,
    );
    expect(events.body[0]?.data).toMatchObject({ pty_id: p.id, reason: "sandbox_gone" });
    // 410 sandbox_terminated (409 while SandboxService's terminate/onProcessDied race marks it failed).
    expect([409, 410]).toContain((await e.api("POST", `/sandboxes/${id}/pty`, {})).status);
  });
});

describe("pty idle sessions", () => {
  let e2: EngineHandle;
  beforeAll(async () => {
    e2 = await startEngine({ env: { ORKESTR_ENGINE_PTY_IDLE_MS: "1500" } });
  });
  afterAll(async () => {
    await e2?.stop();
  });

  it("kills a session nobody watches", async () => {
    const id = await createSandbox(e2);
    const r = await e2.api<PtyView>("POST", `/sandboxes/${id}/pty`, { command: "sleep 300" });
    expect(r.status).toBe(201);
    await eventually(
      async () => {
        const v = await e2.api<PtyView>("GET", `/sandboxes/${id}/pty/${r.body.id}`);
        expect(v.body.status).toBe("exited");
      },
      { timeout: 15_000 },
    );
    const events = await e2.api<{ type: string; data: Record<string, unknown> }[]>(
      "GET",
      `/sandboxes/${id}/events?type=pty.exit`,
    );
    expect(events.body[0]?.data).toMatchObject({ pty_id: r.body.id, reason: "idle" });
  });
});

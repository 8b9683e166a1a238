// `npm run bench:console`: typing latency through Baton's terminal relay, against the engine's PTY
// WebSocket directly. Needs a production build (`npx next build`): it starts a fresh engine and the
// console server (scripts/console-server.mjs) on free ports with a temp data dir, signs up an owner,
// connects the local engine, creates a sandbox and opens two PTY sessions running `cat`. Then it
// types one character at a time and waits for the pty's echo, alternating between
//   - relay: browser-style WebSocket to /api/v1/sandboxes/{id}/pty/{pid}/ws (session cookie, Origin)
//   - direct: the engine's /v1/sandboxes/{id}/pty/{pid}/ws with the Bearer token
// and prints p50/p99 of each and the relay ÷ direct ratio (markdown, plus one JSON line).
//
//   BENCH_KEYS=400 npm run bench:console
import { WebSocket } from "ws";
import { pct } from "../engine/bench/lib";
import { startConsoleBench } from "./bench/console-harness";

const KEYS = Number(process.env.BENCH_KEYS ?? 300);
const WARMUP = 20;

/** A WebSocket that resolves each `echo(ch)` when that character comes back. */
class Echo {
  private waiting: { ch: string; resolve: () => void } | null = null;
  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data, isBinary) => {
      if (!isBinary || !this.waiting) return;
      if (String(data).includes(this.waiting.ch)) {
        const w = this.waiting;
        this.waiting = null;
        w.resolve();
      }
    });
  }
  static open(url: string, headers: Record<string, string>): Promise<Echo> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      ws.on("open", () => resolve(new Echo(ws)));
      ws.on("unexpected-response", (_req, res) => reject(new Error(`${url}: upgrade refused (${res.statusCode})`)));
      ws.on("error", reject);
    });
  }
  /** Milliseconds from sending `ch` to seeing its echo. */
  async roundTrip(ch: string): Promise<number> {
    const done = new Promise<void>((resolve, reject) => {
      this.waiting = { ch, resolve };
      setTimeout(() => reject(new Error(`no echo of ${JSON.stringify(ch)} within 5 s`)), 5_000).unref();
    });
    const t = process.hrtime.bigint();
    this.ws.send(Buffer.from(ch), { binary: true });
    await done;
    return Number(process.hrtime.bigint() - t) / 1e6;
  }
  /** Ctrl-U: kill the line so cat's line buffer stays short. */
  async clearLine(): Promise<void> {
    this.ws.send(Buffer.from("\x15"), { binary: true });
    await new Promise((r) => setTimeout(r, 30));
  }
  close(): void {
    this.ws.close();
  }
}

async function main(): Promise<void> {
  const { engine, port, cookie, origin, api, stop } = await startConsoleBench("terminal");
  let sandboxId: string | null = null;
  const echoes: Echo[] = [];
  try {
    sandboxId = (await api("POST", "/api/v1/sandboxes", { template: "python-3.12", timeout_seconds: 600 }))!
      .id as string;
    const viaRelay = (await api("POST", `/api/v1/sandboxes/${sandboxId}/pty`, { command: "cat", cols: 120, rows: 30 }))!
      .id as string;
    const direct = (await api("POST", `/api/v1/sandboxes/${sandboxId}/pty`, { command: "cat", cols: 120, rows: 30 }))!
      .id as string;
    const relayEcho = await Echo.open(`ws://127.0.0.1:${port}/api/v1/sandboxes/${sandboxId}/pty/${viaRelay}/ws`, {
      cookie,
      origin,
    });
    const directEcho = await Echo.open(`${engine.url.replace(/^http/, "ws")}/sandboxes/${sandboxId}/pty/${direct}/ws`, {
      authorization: `Bearer ${engine.token}`,
    });
    echoes.push(relayEcho, directEcho);
    await new Promise((r) => setTimeout(r, 1_000)); // the sandbox-side pty is ready and the backlog is in

    const samples = { relay: [] as number[], direct: [] as number[] };
    const alphabet = "abcdefghijklmnopqrstuvwxyz";
    for (let i = 0; i < KEYS + WARMUP; i++) {
      const ch = alphabet[i % alphabet.length]!;
      // Alternate which goes first so neither always runs on a warmer path.
      const order: Array<["relay" | "direct", Echo]> =
        i % 2
          ? [
              ["relay", relayEcho],
              ["direct", directEcho],
            ]
          : [
              ["direct", directEcho],
              ["relay", relayEcho],
            ];
      for (const [name, e] of order) {
        const ms = await e.roundTrip(ch);
        if (i >= WARMUP) samples[name].push(ms);
      }
      if (i % alphabet.length === alphabet.length - 1)
        await Promise.all([relayEcho.clearLine(), directEcho.clearLine()]);
    }
    const stats = (xs: number[]) => ({
      p50: pct(xs, 50),
      p99: pct(xs, 99),
      mean: xs.reduce((a, b) => a + b, 0) / xs.length,
    });
    const r = stats(samples.relay);
    const d = stats(samples.direct);
    const f = (n: number) => n.toFixed(2);
    console.log(`\nTyping latency (keystroke → echo), ${KEYS} keys each, pty running cat, loopback:\n`);
    console.log("| Path | p50 | p99 | mean |");
    console.log("|---|---:|---:|---:|");
    console.log(`| Through Baton's relay | ${f(r.p50)} ms | ${f(r.p99)} ms | ${f(r.mean)} ms |`);
    console.log(`| Direct to the engine | ${f(d.p50)} ms | ${f(d.p99)} ms | ${f(d.mean)} ms |`);
    console.log(
      `| Relay ÷ direct | ${(r.p50 / d.p50).toFixed(2)}× | ${(r.p99 / d.p99).toFixed(2)}× | ${(r.mean / d.mean).toFixed(2)}× |`,
    );
    console.log(
      `\n${JSON.stringify({ bench: "terminal-typing-latency", keys: KEYS, relay_ms: r, direct_ms: d, ratio_p50: r.p50 / d.p50, ratio_p99: r.p99 / d.p99 })}`,
    );
  } finally {
    for (const e of echoes) e.close();
    if (sandboxId) await engine.api("DELETE", `/sandboxes/${sandboxId}`).catch(() => undefined);
    await stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

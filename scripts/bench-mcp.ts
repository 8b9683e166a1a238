// `npx tsx scripts/bench-mcp.ts`: what Baton's MCP endpoint adds to a tool call, against issue 23's
// budget: an MCP `exec` round trip over a warm session ≤ 1.3× the same exec through /api/v1 with the
// same Baton token. Needs a production build (`npx next build`).
//
// A fresh engine and the production console (scripts/bench/console-harness.ts), an owner with an API
// token made through /api/tokens, one sandbox. The MCP side is the SDK's own client
// (StreamableHTTPClientTransport) connected once (initialize and the tool list are the warm-up); the
// /api/v1 side is a keep-alive fetch with the token. BENCH_ROUNDS rounds (default 200) alternate which
// goes first. Prints a markdown table (engine/bench/lib.ts) and one JSON line; never asserts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { pct, table, type Row } from "../engine/bench/lib";
import { startConsoleBench } from "./bench/console-harness";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const BUDGET_RATIO = 1.3;

const log = (s: string) => process.stderr.write(`[bench:mcp] ${s}\n`);

async function main() {
  // BENCH_CPU_PROF=DIR: the console runs with --cpu-prof, its profile written to DIR at exit.
  const prof = process.env.BENCH_CPU_PROF;
  const bench = await startConsoleBench("mcp", prof ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${prof}`] } : {});
  try {
    const issued = (await bench.api("POST", "/api/tokens", { name: "bench agent", scope: "write" })) as {
      token: string;
    };
    const auth = { authorization: `Bearer ${issued.token}` };
    const created = (await bench.api("POST", "/api/v1/sandboxes", { template: "python-3.12" })) as { id: string };
    const id = created.id;
    const body = JSON.stringify({ command: "true" });

    const viaV1 = async () => {
      const t0 = performance.now();
      const res = await fetch(`${bench.origin}/api/v1/sandboxes/${id}/exec`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/api/v1 exec: ${res.status}`);
      return performance.now() - t0;
    };

    const client = new Client({ name: "bench-mcp", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/api/mcp", bench.origin), { requestInit: { headers: auth } }),
    );
    await client.listTools();
    const viaMcp = async () => {
      const t0 = performance.now();
      const result = await client.callTool({ name: "exec", arguments: { sandbox_id: id, command: "true" } });
      if (result.isError) throw new Error(`MCP exec: ${JSON.stringify(result.content)}`);
      return performance.now() - t0;
    };

    // The same tool call as a bare JSON-RPC POST: the endpoint's own cost, without the SDK client's.
    const rawBody = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "exec", arguments: { sandbox_id: id, command: "true" } },
    });
    const viaRaw = async () => {
      const t0 = performance.now();
      const res = await fetch(`${bench.origin}/api/mcp`, {
        method: "POST",
        headers: {
          ...auth,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        },
        body: rawBody,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`raw MCP exec: ${res.status}`);
      return performance.now() - t0;
    };

    log(`warm-up (${WARMUP} rounds), then ${ROUNDS} rounds`);
    for (let i = 0; i < WARMUP; i++) {
      await viaV1();
      await viaMcp();
      await viaRaw();
    }
    const v1: number[] = [];
    const mcp: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      if (i % 2 === 0) {
        v1.push(await viaV1());
        mcp.push(await viaMcp());
        raw.push(await viaRaw());
      } else {
        raw.push(await viaRaw());
        mcp.push(await viaMcp());
        v1.push(await viaV1());
      }
    }
    await client.close();
    await bench.api("DELETE", `/api/v1/sandboxes/${id}`);

    const rows: Row[] = [
      { metric: "exec `true` through /api/v1 (token), p50", ours: pct(v1, 50), unit: "ms", ref: null, source: "—" },
      { metric: "exec `true` over MCP (warm session), p50", ours: pct(mcp, 50), unit: "ms", ref: null, source: "—" },
      {
        metric: "exec `true` as a bare JSON-RPC POST to /api/mcp, p50",
        ours: pct(raw, 50),
        unit: "ms",
        ref: null,
        source: "the endpoint without the SDK client",
      },
      {
        metric: "MCP ÷ /api/v1, p50",
        ours: pct(mcp, 50) / pct(v1, 50),
        unit: "×",
        ref: BUDGET_RATIO,
        source: "issue 23: an MCP exec ≤ 1.3× the same exec through /api/v1",
      },
      { metric: "exec `true` through /api/v1 (token), p99", ours: pct(v1, 99), unit: "ms", ref: null, source: "—" },
      { metric: "exec `true` over MCP (warm session), p99", ours: pct(mcp, 99), unit: "ms", ref: null, source: "—" },
    ];
    console.log(table(rows));
    console.log(
      JSON.stringify({
        bench: "mcp",
        rounds: ROUNDS,
        v1_p50_ms: pct(v1, 50),
        mcp_p50_ms: pct(mcp, 50),
        ratio_p50: pct(mcp, 50) / pct(v1, 50),
      }),
    );
  } finally {
    await bench.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

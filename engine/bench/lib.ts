import fs from "node:fs";
import http from "node:http";
import type { EngineHandle } from "../test/helpers/engine.js";

/** Shared helpers for `npm run bench`: statistics, the table printer, an exec/stream client, /proc lookups. */

/** What each bench section gets from run.ts: the engine, sandbox lifecycle calls that keep the cleanup list, and the notes printed under the table. */
export type Bench = {
  e: EngineHandle;
  create(body?: Record<string, unknown>): Promise<string>;
  terminate(id: string): Promise<void>;
  /** POST /exec; throws unless it exits 0. Returns stdout. */
  exec(id: string, command: string, extra?: Record<string, unknown>): Promise<string>;
  note(text: string): void;
};

/** Nearest-rank percentile of a sample (p in 0..100). */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!;
}

export interface Row {
  metric: string;
  ours: number;
  unit: string;
  /** Reference or target value in the same unit; null when there is none to compare against. */
  ref: number | null;
  source: string;
}

const fmt = (n: number) =>
  Number.isNaN(n) ? "—" : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);

/** A markdown table: our number, the reference, and ours ÷ reference side by side. */
export function table(rows: Row[]): string {
  const lines = [
    "| Measurement | Ours | Reference / target | Ours ÷ ref | Reference source |",
    "|---|---:|---:|---:|---|",
  ];
  for (const r of rows) {
    const ref = r.ref === null ? "—" : `${fmt(r.ref)} ${r.unit}`;
    const ratio = r.ref === null || r.ref === 0 ? "—" : `${(r.ours / r.ref).toFixed(2)}×`;
    lines.push(`| ${r.metric} | ${fmt(r.ours)} ${r.unit} | ${ref} | ${ratio} | ${r.source} |`);
  }
  return lines.join("\n");
}

export interface StreamResult {
  ms: number;
  /** Decoded stdout+stderr payload bytes. */
  payloadBytes: number;
  /** Bytes of the HTTP body as received (frames, JSON escaping, keepalives). */
  wireBytes: number;
  final: { is_final: true; exit_code?: number; error?: string };
}

/**
 * Runs `command` via POST /v1/sandboxes/{id}/exec/stream and counts payload bytes: text chunks by
 * their UTF-8 length, base64 chunks by their decoded length. SSE by default, NDJSON when asked.
 * Both framings put one JSON object per line (JSON never holds a raw newline), so the client splits
 * Buffers on "\n" without copying the body around: the client should not be the bottleneck.
 */
export function streamExec(
  origin: string,
  token: string,
  id: string,
  command: string,
  format: "sse" | "ndjson",
): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(`${origin}/v1/sandboxes/${id}/exec/stream`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: format === "sse" ? "text/event-stream" : "application/x-ndjson",
      },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`exec/stream answered ${res.statusCode}`));
      }
      let partial: Buffer[] = [];
      let payloadBytes = 0;
      let wireBytes = 0;
      let final: StreamResult["final"] | null = null;
      const onLine = (line: Buffer) => {
        let json = line.toString("utf8");
        if (format === "sse") {
          if (!json.startsWith("data: ")) return; // blank frame separator or ": keepalive"
          json = json.slice(6);
        } else if (!json.trim()) return; // keepalive
        const f = JSON.parse(json) as { data?: string; encoding?: string; is_final?: boolean };
        if (f.is_final) final = f as StreamResult["final"];
        else if (f.data !== undefined)
          payloadBytes += f.encoding === "base64" ? Buffer.from(f.data, "base64").length : Buffer.byteLength(f.data);
      };
      res.on("data", (chunk: Buffer) => {
        wireBytes += chunk.length;
        let start = 0;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
          partial.push(chunk.subarray(start, i));
          onLine(partial.length === 1 ? partial[0]! : Buffer.concat(partial));
          partial = [];
          start = i + 1;
        }
        if (start < chunk.length) partial.push(chunk.subarray(start));
      });
      res.on("end", () => {
        if (partial.length) onLine(Buffer.concat(partial));
        if (!final) return reject(new Error("stream ended without a final frame"));
        resolve({ ms: performance.now() - started, payloadBytes, wireBytes, final });
      });
      res.on("error", reject);
    });
    req.end(JSON.stringify({ command, timeout_seconds: 120 }));
  });
}

/** Direct children of a process (all its threads'). */
export function children(pid: number): number[] {
  const out: number[] = [];
  for (const tid of safe(() => fs.readdirSync(`/proc/${pid}/task`), [] as string[])) {
    const text = safe(() => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8"), "");
    out.push(...text.split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

export function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const c of children(pid)) out.push(c, ...descendants(c));
  return out;
}

/** `Name` and `VmRSS` (bytes) from /proc/<pid>/status. */
export function procStatus(pid: number): { name: string; rssBytes: number } {
  const text = safe(() => fs.readFileSync(`/proc/${pid}/status`, "utf8"), "");
  const rssKb = Number(text.match(/^VmRSS:\s*(\d+)\s*kB$/m)?.[1] ?? 0);
  return { name: text.match(/^Name:\s*(.+)$/m)?.[1] ?? "?", rssBytes: rssKb * 1024 };
}

/** User+system CPU seconds a process has used (/proc/<pid>/stat, USER_HZ = 100). */
export function cpuSeconds(pid: number): number {
  const f =
    safe(() => fs.readFileSync(`/proc/${pid}/stat`, "utf8"), "")
      .split(") ")[1]
      ?.split(" ") ?? [];
  return (Number(f[11] ?? 0) + Number(f[12] ?? 0)) / 100;
}

/**
 * The process that holds the listening TCP socket on `port`, searched among `rootPid` and its
 * descendants: /proc/net/tcp{,6} gives the socket inode, /proc/<pid>/fd/* the owner.
 */
export function listeningPid(rootPid: number, port: number): number | null {
  const portHex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of safe(() => fs.readFileSync(file, "utf8"), "")
      .split("\n")
      .slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${portHex}`) && f[3] === "0A" && f[9]) inodes.add(`socket:[${f[9]}]`);
    }
  }
  for (const pid of [rootPid, ...descendants(rootPid)]) {
    for (const fd of safe(() => fs.readdirSync(`/proc/${pid}/fd`), [] as string[])) {
      if (inodes.has(safe(() => fs.readlinkSync(`/proc/${pid}/fd/${fd}`), ""))) return pid;
    }
  }
  return null;
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

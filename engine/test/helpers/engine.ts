import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { OpaqueNames } from "../../src/runtime/opaque-names.js";

/**
 * Boots a real engine process for a test file (temp data dir, free port) and gives typed HTTP
 * helpers. With ORKESTR_API_URL and ORKESTR_API_KEY set, `target()` points at that server instead,
 * so the contract suite runs against any v1 implementation.
 */
export interface EngineHandle {
  /** Base URL including /v1. */
  url: string;
  /** Engine origin (for previews and /_admin). */
  origin: string;
  token: string;
  dataDir: string | null;
  bootstrap: string | null;
  local: boolean;
  proc: ChildProcess | null;
  /** Pid of the engine process itself (the launcher re-executes it in a private mount namespace). */
  enginePid: number | null;
  log(): string;
  /** A new token; `account` names the engine account it acts for (default "default"). */
  mint(scopes: string[], opts?: { account?: string; expiresInSeconds?: number; label?: string }): Promise<string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely typed JSON
  api<T = any>(
    method: string,
    p: string,
    body?: unknown,
    opts?: { token?: string | null; headers?: Record<string, string> },
  ): Promise<ApiResponse<T>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ApiResponse<T> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

let engines = 0;

/**
 * Engines still running when the test process exits (a failed test skipped its stop) are told to
 * stop: sandboxes outlive a dead engine (runtime/holder.ts), so a leaked engine would leak them.
 */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of running) p.kill("SIGTERM");
});
/**
 * Engines started in parallel by different test files must not hand out the same host uids,
 * so each starts its own block of 10000 uids (the engine also skips blocks in use).
 */
function uidBase(): number {
  return 1_000_000 + ((process.pid * 13 + engines++) % 500) * 10_000;
}

/** `checkout`: run the engine from another copy of the repository (default: this one). */
export async function startEngine(
  opts: { env?: Record<string, string>; dataDir?: string; checkout?: string } = {},
): Promise<EngineHandle> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "baton-engine-"));
  const checkout = opts.checkout ?? ROOT;
  const proc = spawn(process.execPath, ["--import", "tsx", path.join(checkout, "engine/src/server.ts")], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
      HOME: process.env.HOME ?? "/root",
      // The engine does not read it; the console's tests import this helper under Next's types,
      // which make NODE_ENV a required key of every process environment.
      NODE_ENV: "production",
      BATON_DATA_DIR: dataDir,
      ORKESTR_ENGINE_PORT: "0",
      ORKESTR_ENGINE_LOG: "warn",
      // Every answer is checked against its documented schema (docs/openapi.json): a mismatch is a 500.
      ORKESTR_ENGINE_CHECK_RESPONSES: "1",
      ORKESTR_ENGINE_UID_BASE: String(uidBase()),
      // Test engines start with no warm pool: test files run in parallel on a small machine, and
      // most count sandboxes, uids or capacity. The pool's own tests (and the bench) turn it on.
      ORKESTR_ENGINE_POOL_SIZE: "0",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(proc);
  proc.once("exit", () => running.delete(proc));
  let log = "";
  proc.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const { port, pid } = await new Promise<{ port: number; pid: number }>((resolve, reject) => {
    let out = "";
    const t = setTimeout(() => reject(new Error(`engine did not start in 30 s:\n${log}`)), 30_000);
    proc.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = out.match(/\{"ready":true,"port":(\d+),"pid":(\d+)/);
      if (m) {
        clearTimeout(t);
        resolve({ port: Number(m[1]), pid: Number(m[2]) });
      }
    });
    proc.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`engine exited (${code}) during start:\n${log}`));
    });
  });
  const origin = `http://127.0.0.1:${port}`;
  const bootstrap = fs.readFileSync(path.join(dataDir, "engine", "bootstrap.secret"), "utf8").trim();
  const mint: EngineHandle["mint"] = async (scopes, opts = {}) => {
    const r = await fetch(`${origin}/_admin/tokens`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-baton-bootstrap": bootstrap },
      body: JSON.stringify({
        scopes,
        account: opts.account,
        expires_in_seconds: opts.expiresInSeconds,
        label: opts.label,
      }),
    });
    if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { token: string }).token;
  };
  const token = await mint(["sandboxes:read", "sandboxes:write"]);
  const handle: EngineHandle = {
    url: `${origin}/v1`,
    origin,
    token,
    dataDir,
    bootstrap,
    local: true,
    proc,
    enginePid: pid,
    log: () => log,
    mint,
    // handle.token, read at each call: actAsAccountOf() may point the handle at another account.
    api: (method, p, body, o) =>
      call(`${origin}/v1`, o?.token === undefined ? handle.token : o.token, method, p, body, o?.headers),
    stop: (signal = "SIGTERM") =>
      new Promise((resolve) => {
        // Already gone (exited, or killed by a signal: then exitCode stays null).
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
        proc.once("exit", (code) => resolve(code));
        proc.kill(signal);
      }),
  };
  return handle;
}

/**
 * Points `e` (its token, so e.api()) at the engine account of the newest token whose label
 * contains `label`: the console labels the tokens it mints with the user, in their team's
 * account, so a test can seed and inspect exactly what that user's console shows. Returns the
 * account's name.
 */
export async function actAsAccountOf(e: EngineHandle, label: string): Promise<string> {
  const r = await fetch(`${e.origin}/_admin/tokens`, { headers: { "x-baton-bootstrap": e.bootstrap! } });
  if (r.status !== 200) throw new Error(`listing tokens failed: ${r.status} ${await r.text()}`);
  const tokens = (await r.json()) as { label: string | null; account: { name: string }; revoked_at: string | null }[];
  const held = tokens.find((t) => t.revoked_at === null && t.label?.includes(label));
  if (!held) throw new Error(`no live engine token labelled "${label}"`);
  e.token = await e.mint(["sandboxes:read", "sandboxes:write"], {
    account: held.account.name,
    label: `test harness for ${label}`,
  });
  return held.account.name;
}

/**
 * The server under test: ORKESTR_API_URL/KEY when given, else a fresh local engine (started with
 * `opts.env`, which a remote server never sees).
 */
export async function target(opts: { env?: Record<string, string> } = {}): Promise<EngineHandle> {
  const url = process.env.ORKESTR_API_URL;
  const key = process.env.ORKESTR_API_KEY;
  if (!url || !key) return startEngine({ env: opts.env });
  const base = url.replace(/\/+$/, "").replace(/\/v1$/, "") + "/v1";
  return {
    url: base,
    origin: new URL(base).origin,
    token: key,
    dataDir: null,
    bootstrap: null,
    local: false,
    proc: null,
    enginePid: null,
    log: () => "",
    mint: async () => {
      throw new Error("cannot mint tokens on a remote server");
    },
    api: (method, p, body, o) => call(base, o?.token === undefined ? key : o.token, method, p, body, o?.headers),
    stop: async () => null,
  };
}

/**
 * A host path as the engine sees it. The engine lives in a private mount namespace where each
 * sandbox's scratch is a tmpfs; /proc/<pid>/root resolves paths inside that namespace.
 */
export function enginePath(e: EngineHandle, p: string): string {
  return `/proc/${e.enginePid}/root${p}`;
}

/**
 * The name the engine gives a sandbox's (or build's) cgroups: its id, encrypted with the engine's
 * key (runtime/opaque-names.ts), so that local users listing cgroupfs learn no sandbox id.
 */
export function cgroupNameOf(e: EngineHandle, id: string): string {
  const key = fs.readFileSync(enginePath(e, path.join(e.dataDir!, "engine", "host-names.key")));
  return new OpaqueNames(key).encode(id);
}

/** argv prefix that runs a command in the engine's mount namespace. */
export function inEngineMountNs(e: EngineHandle): string[] {
  return ["nsenter", "-t", String(e.enginePid), "-m", "--"];
}

export async function call<T>(
  base: string,
  token: string | null,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const h: Record<string, string> = { ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = typeof body === "string" ? body : JSON.stringify(body);
    h["content-type"] ??= "application/json";
  }
  const r = await fetch(base + p, { method, headers: h, body: payload });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: r.status, headers: r.headers, body: parsed as T, text };
}

/** Creates a sandbox and returns its id; asserts 201 with a helpful message. */
export async function createSandbox(e: EngineHandle, body: Record<string, unknown> = {}): Promise<string> {
  const r = await e.api<{ id: string }>("POST", "/sandboxes", { template: "python-3.12", ...body });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}\n${e.log()}`);
  return r.body.id;
}

export async function exec(e: EngineHandle, id: string, command: string, extra: Record<string, unknown> = {}) {
  const r = await e.api<{
    stdout: string;
    stderr: string;
    exit_code: number;
    duration_ms: number;
    timed_out: boolean;
    truncated: boolean;
  }>("POST", `/sandboxes/${id}/exec`, { command, ...extra });
  if (r.status !== 200) throw new Error(`exec failed: ${r.status} ${r.text}`);
  return r.body;
}

/** A rule for the engine's fault injection (/_admin/faults): which requests fail, and how. */
export type FaultRule = Record<string, unknown>;

function admin(e: EngineHandle, method: string, body?: FaultRule): Promise<Response> {
  if (!e.bootstrap) throw new Error("fault injection needs a local engine (/_admin and its bootstrap secret)");
  return fetch(`${e.origin}/_admin/faults`, {
    method,
    headers: { "x-baton-bootstrap": e.bootstrap, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

/** Makes the engine fail the requests `rule` matches until clearFaults() (or the rule's own count runs out). */
export async function injectFault(e: EngineHandle, rule: FaultRule): Promise<void> {
  const r = await admin(e, "POST", rule);
  if (r.status !== 201) throw new Error(`fault injection failed: ${r.status} ${await r.text()}`);
}

/** The fault rules still active. */
export async function activeFaults(e: EngineHandle): Promise<unknown[]> {
  const r = await admin(e, "GET");
  if (r.status !== 200) throw new Error(`listing faults failed: ${r.status} ${await r.text()}`);
  return (await r.json()) as unknown[];
}

export async function clearFaults(e: EngineHandle): Promise<void> {
  const r = await admin(e, "DELETE");
  if (!r.ok) throw new Error(`clearing faults failed: ${r.status} ${await r.text()}`);
}

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Several Baton console instances on one PostgreSQL behind nginx, on this machine: what
// e2e/multi-instance.spec.ts runs its test through, and what scripts/multi-instance/run.ts starts
// for a person trying it by hand. Every process is a real one: the production console server
// (scripts/console-server.mjs on the built .next) and Debian's nginx, as a foreground process with
// its own prefix directory (nothing of the system's nginx is used). The engine and the database are
// the caller's.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CONSOLE_SERVER = path.join(ROOT, "scripts", "console-server.mjs");
const TEMPLATE = path.join(ROOT, "scripts", "multi-instance", "nginx.conf.template");
export const NGINX_BIN = process.env.NGINX_BIN ?? "/usr/sbin/nginx";

export interface TopologyOptions {
  /** PostgreSQL, shared by every instance (a SQLite file cannot be). */
  databaseUrl: string;
  /** The engine's origin (ORKESTR_API_URL), shared by every instance. */
  engineUrl: string;
  /** How many console instances (default 2). */
  instances?: number;
  /** Where the balancer listens (default: a free port on 127.0.0.1). */
  balancerPort?: number;
  /** The instances' ports (default: free ports on 127.0.0.1). */
  instancePorts?: number[];
  /** BATON_SECRET for every instance (default: 32 random bytes, hex). */
  secret?: string;
  /** Where the data dirs and nginx's prefix go (default: a new temp dir, removed by stop()). */
  root?: string;
  /**
   * The address nginx connects to the instances from (nginx's proxy_bind), e.g. "127.0.0.2": then
   * the instances see the proxy at another address than the browser's, which shows whose address
   * Baton takes for the client's.
   */
  proxyBind?: string;
  /** More environment for the instances. */
  env?: NodeJS.ProcessEnv;
  /** Each line the processes print, with the process's name (default: kept, not printed). */
  onLine?: (name: string, line: string) => void;
}

export interface ConsoleInstance {
  name: string;
  /** The console server's process id (it names itself with it in the leases it takes). */
  pid: number;
  port: number;
  /** Its own origin (it answers only to BATON_URL's Host: requests straight to it get 421). */
  origin: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  log(): string;
}

export interface Topology {
  /** The balancer's origin: BATON_URL of every instance. */
  url: string;
  instances: ConsoleInstance[];
  /** nginx's prefix directory (its config, logs). */
  nginxPrefix: string;
  nginxLog(): string;
  /** The instance an `X-Baton-Upstream` answer header names (nginx's $upstream_addr). */
  instanceFor(upstreamAddr: string | null): ConsoleInstance | undefined;
  /** The first-run setup code, from whichever instance printed it. */
  setupCode(): string;
  stop(): Promise<void>;
}

export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface NginxVars {
  prefix: string;
  listen: string;
  upstreams: string[];
  proxyBind?: string;
  /** Set when nginx starts as root: the user its workers run as. */
  user?: string;
}

/** The nginx.conf for `vars`, from nginx.conf.template. */
export function renderNginxConfig(vars: NginxVars): string {
  const values: Record<string, string> = {
    PREFIX: vars.prefix,
    USER: vars.user ? `user ${vars.user};` : "",
    LISTEN: vars.listen,
    UPSTREAMS: vars.upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=5s;`).join("\n"),
    PROXY_BIND: vars.proxyBind ? `proxy_bind ${vars.proxyBind};` : "",
  };
  return fs.readFileSync(TEMPLATE, "utf8").replace(/\{\{([A-Z_]+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`nginx.conf.template: unknown placeholder ${whole}`);
    return value;
  });
}

interface Proc {
  child: ChildProcess;
  log(): string;
}

function launch(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onLine?: TopologyOptions["onLine"],
): Proc {
  // Its own process group, so stop() ends whatever it started too.
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let out = "";
  let partial = "";
  const take = (d: Buffer) => {
    const text = d.toString();
    out += text;
    if (!onLine) return;
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) onLine(name, line);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  return { child, log: () => out };
}

async function stopProc(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** GET `pathname` from 127.0.0.1:`port` with a given Host header; the status, or null when nothing answers. */
export function statusOf(port: number, host: string, pathname: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path: pathname, headers: { host }, setHost: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    req.on("error", () => resolve(null));
    req.setTimeout(5_000, () => req.destroy());
    req.end();
  });
}

async function waitFor(what: string, proc: Proc, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null)
      throw new Error(`${what} exited (${proc.child.signalCode ?? proc.child.exitCode}):\n${proc.log()}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${proc.log()}`);
}

/** Starts the instances, then nginx in front of them; stop() ends all of them (and removes a temp root). */
export async function startTopology(options: TopologyOptions): Promise<Topology> {
  if (!fs.existsSync(path.join(ROOT, ".next", "BUILD_ID")))
    throw new Error("no production build of the console: run `npx next build` first");
  if (!/^postgres(ql)?:\/\//.test(options.databaseUrl))
    throw new Error("several instances need one PostgreSQL database: DATABASE_URL must be postgres://…");
  const count = options.instances ?? 2;
  const ownRoot = !options.root;
  const root = options.root ?? fs.mkdtempSync(path.join(os.tmpdir(), "baton-multi-"));
  const secret = options.secret ?? randomBytes(32).toString("hex");
  const balancerPort = options.balancerPort ?? (await freePort());
  const url = `http://127.0.0.1:${balancerPort}`;
  const procs: Proc[] = [];
  const instances: ConsoleInstance[] = [];

  const stop = async () => {
    // The balancer first: no request reaches an instance that is going away.
    await Promise.all(
      procs
        .slice()
        .reverse()
        .map((p) => stopProc(p.child)),
    );
    if (ownRoot) fs.rmSync(root, { recursive: true, force: true });
  };

  try {
    for (let i = 0; i < count; i++) {
      const name = `baton-${String.fromCharCode(97 + i)}`;
      const port = options.instancePorts?.[i] ?? (await freePort());
      const dataDir = path.join(root, name);
      fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        NODE_ENV: "production",
        PORT: String(port),
        BATON_DATA_DIR: dataDir,
        DATABASE_URL: options.databaseUrl,
        ORKESTR_API_URL: options.engineUrl,
        BATON_SECRET: secret,
        BATON_URL: url,
        BATON_TRUSTED_PROXIES: "1",
        ...options.env,
      };
      delete env.BATON_ALLOWED_HOSTS;
      const proc = launch(
        name,
        process.execPath,
        [CONSOLE_SERVER, "-p", String(port), "-H", "127.0.0.1"],
        env,
        options.onLine,
      );
      procs.push(proc);
      instances.push({
        name,
        pid: proc.child.pid!,
        port,
        origin: `http://127.0.0.1:${port}`,
        dataDir,
        env,
        log: proc.log,
      });
    }
    // One after the other would double the wait; they start side by side (and race for the
    // migrations and the setup code, which they must survive).
    await Promise.all(
      instances.map((instance, i) =>
        waitFor(
          instance.name,
          procs[i]!,
          async () =>
            // Another process may hold the port until the server says it listens: only then ask it.
            /Ready in/.test(procs[i]!.log()) &&
            ((await statusOf(instance.port, new URL(url).host, "/login")) ?? 500) < 500,
          120_000,
        ),
      ),
    );

    const nginxPrefix = path.join(root, "nginx");
    fs.mkdirSync(nginxPrefix, { recursive: true });
    const asRoot = process.getuid?.() === 0;
    // As root, nginx's workers run as nobody: they must be able to reach the temp dirs under the prefix.
    if (asRoot) for (const dir of [root, nginxPrefix]) fs.chmodSync(dir, 0o755);
    const config = path.join(nginxPrefix, "nginx.conf");
    fs.writeFileSync(
      config,
      renderNginxConfig({
        prefix: nginxPrefix,
        listen: `127.0.0.1:${balancerPort}`,
        upstreams: instances.map((i) => `127.0.0.1:${i.port}`),
        proxyBind: options.proxyBind,
        user: asRoot ? "nobody nogroup" : undefined,
      }),
    );
    const nginx = launch(
      "nginx",
      NGINX_BIN,
      ["-p", nginxPrefix, "-c", config, "-e", path.join(nginxPrefix, "error.log")],
      process.env,
      options.onLine,
    );
    procs.push(nginx);
    const nginxLog = () => {
      try {
        return nginx.log() + fs.readFileSync(path.join(nginxPrefix, "error.log"), "utf8");
      } catch {
        return nginx.log();
      }
    };
    await waitFor(
      "nginx",
      { child: nginx.child, log: nginxLog },
      async () => ((await statusOf(balancerPort, new URL(url).host, "/login")) ?? 500) < 500,
      30_000,
    );

    return {
      url,
      instances,
      nginxPrefix,
      nginxLog,
      instanceFor: (addr) => instances.find((i) => addr?.split(/,\s*/).pop() === `127.0.0.1:${i.port}`),
      setupCode() {
        for (const instance of instances) {
          const code = /the setup code is ([A-Z0-9-]+)/.exec(instance.log())?.[1];
          if (code) return code;
        }
        throw new Error(`no instance printed a setup code:\n${instances.map((i) => i.log()).join("\n")}`);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

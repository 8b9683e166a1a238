import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cgroupNameOf, createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { isForbiddenAddress } from "../src/services/egress-proxy.js";
import {
  FAKE_GREETING,
  HOST_SECRET,
  leftoverNamespaces,
  startFakeInternet,
  startHostServer,
  type FakeInternet,
  type HostServer,
} from "./helpers/fake-internet.js";

const ENV_CANARY = "engine-env-canary-7f3a"; // see startEngine below

/**
 * Network modes against a fake internet (a namespace this file makes, engine-notes §4): no test
 * here sends a packet anywhere but loopback or that namespace. The egress proxy resolves the
 * test names through ORKESTR_ENGINE_EGRESS_HOSTS, never DNS.
 */

const execFileP = promisify(execFile);

let e: EngineHandle;
let fi: FakeInternet;
let hostLo: HostServer;
/** A host server on the host side of the fake internet's veth: a host address that is not loopback. */
let hostVeth: HostServer;
let ipForwardBefore: string;
const created: string[] = [];

function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

async function run(id: string, command: string, timeout_seconds = 20) {
  return exec(e, id, command, { timeout_seconds });
}

async function sandbox(body: Record<string, unknown>): Promise<string> {
  const id = await createSandbox(e, body);
  created.push(id);
  return id;
}

async function terminate(id: string): Promise<void> {
  const r = await e.api("DELETE", `/sandboxes/${id}`);
  expect([200, 202, 204]).toContain(r.status);
}

/** What a test reads of a process: its name, command line and working directory. */
interface ProcInfo {
  comm: string;
  cmd: string;
  /** Relays run in their sandbox's directory (it is in no command line: the id must not be). */
  cwd: string;
}

/** Processes descended from the engine, as pid → { comm, cmdline, cwd }. */
function engineDescendants(): Map<number, ProcInfo> {
  const parent = new Map<number, number>();
  const info = new Map<number, ProcInfo>();
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(d), ppid);
      info.set(Number(d), {
        comm: fs.readFileSync(`/proc/${d}/comm`, "utf8").trim(),
        cmd: fs.readFileSync(`/proc/${d}/cmdline`, "utf8").replace(/\0/g, " ").trim(),
        cwd: fs.readlinkSync(`/proc/${d}/cwd`),
      });
    } catch {
      /* exited meanwhile */
    }
  }
  const root = e.proc!.pid!;
  const out = new Map<number, ProcInfo>();
  for (const [pid, i] of info) {
    let p = parent.get(pid);
    for (let depth = 0; p && depth < 64; depth++) {
      if (p === root) {
        out.set(pid, i);
        break;
      }
      p = parent.get(p);
    }
  }
  return out;
}

function relays(): Map<number, ProcInfo> {
  return new Map([...engineDescendants()].filter(([, i]) => i.comm === "socat" || i.comm === "slirp4netns"));
}

/** The socat/slirp4netns processes of one sandbox: they run in its cgroups. */
function helpersOf(id: string): number[] {
  return [...relays()]
    .filter(([pid]) => {
      try {
        return fs
          .readFileSync(`/proc/${pid}/cgroup`, "utf8")
          .split("\n")
          .some((l) => l.includes(":pids:") && l.endsWith(`/${cgroupNameOf(e, id)}`));
      } catch {
        return false;
      }
    })
    .map(([pid]) => pid);
}

/** PF_EXITING in /proc/<pid>/stat's flags field (the 9th). */
const PF_EXITING = 0x4;

/**
 * A process's status and pids-cgroup line, read while it is alive and not exiting (null
 * otherwise): checked again after reading, as it may start exiting in between.
 */
function liveProcess(pid: number): { status: string; pidsCgroup: string } | null {
  const exiting = () => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[6]) & PF_EXITING) !== 0;
  };
  try {
    if (exiting()) return null;
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const pidsCgroup =
      fs
        .readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .find((l) => /:pids:/.test(l)) ?? "";
    if (exiting()) return null;
    return { status, pidsCgroup };
  } catch {
    return null; // gone
  }
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

async function waitGone(pids: number[], ms: number): Promise<number[]> {
  const end = Date.now() + ms;
  let left = pids;
  while (Date.now() < end) {
    left = pids.filter(
      (p) => fs.existsSync(`/proc/${p}`) && !fs.readFileSync(`/proc/${p}/stat`, "utf8").includes(") Z "),
    );
    if (left.length === 0) return [];
    await new Promise((r) => setTimeout(r, 50));
  }
  return left;
}

beforeAll(async () => {
  ipForwardBefore = fs.readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim();
  fi = await startFakeInternet();
  hostLo = await startHostServer("127.0.0.1");
  hostVeth = await startHostServer(fi.hostIp);
  const egressHosts = [
    `allowed.test=${fi.ip}`,
    `denied.test=${fi.ip}`,
    // Allow-listed names that resolve where a sandbox must never get to.
    "local.test=127.0.0.1",
    "zero.test=0.0.0.0",
    "zero6.test=::",
    "mapped.test=::ffff:127.0.0.1",
    `self.test=${fi.hostIp}`,
    `lan.test=${fi.privateIp}`,
  ].join(",");
  // The canary: nothing of the engine's environment may reach a process running as a sandbox's uid.
  e = await startEngine({ env: { ORKESTR_ENGINE_EGRESS_HOSTS: egressHosts, BATON_ENV_CANARY: ENV_CANARY } });
}, 90_000);

/** Never lets one cleanup step hold up the ones after it. */
function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([p.catch(() => undefined), new Promise<undefined>((r) => setTimeout(() => r(undefined), ms))]);
}

afterAll(async () => {
  try {
    for (const id of created) await bounded(e?.api("DELETE", `/sandboxes/${id}`) ?? Promise.resolve(), 5000);
    if (e && (await bounded(e.stop(), 15_000)) === undefined && e.proc?.exitCode === null) {
      // The engine did not stop: SIGKILL its wrapper; PDEATHSIG / --die-with-parent take the rest.
      e.proc.kill("SIGKILL");
    }
    if (e?.dataDir) fs.rmSync(e.dataDir, { recursive: true, force: true });
  } finally {
    await bounded(hostLo?.close() ?? Promise.resolve(), 2000);
    await bounded(hostVeth?.close() ?? Promise.resolve(), 2000);
    await fi?.close();
  }
  expect(await leftoverNamespaces()).toEqual([]);
  expect(fs.readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim()).toBe(ipForwardBefore);
}, 60_000);

describe("egress address policy", () => {
  it("refuses loopback, unspecified, private, link-local and host addresses, in any spelling", () => {
    const refused = [
      "127.0.0.1",
      "127.1.2.3",
      "0.0.0.0",
      "10.200.1.2",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "100.64.0.1",
      "169.254.169.254",
      "224.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "fe80::1",
      "fd00::1",
      "ff02::1",
      "64:ff9b::7f00:1",
      "not-an-ip",
    ];
    for (const ip of refused) expect(isForbiddenAddress(ip), ip).toBe(true);
    for (const ip of ["198.18.0.2", "8.8.4.4", "2001:db8::1", "::ffff:198.18.0.2"])
      expect(isForbiddenAddress(ip), ip).toBe(false);
  });
});

describe("engine host setup", () => {
  it("blackholes the sandbox range while it runs", async () => {
    const { stdout } = await execFileP("ip", ["route", "show", "type", "blackhole"]);
    expect(stdout).toContain("10.200.0.0/16");
  });

  it("publishes the default egress list and the network modes (without connecting to any of them)", async () => {
    const r = await e.api("GET", "/sandboxes/limits");
    expect(r.status).toBe(200);
    const list = r.body.default_egress_domains as unknown;
    expect(Array.isArray(list)).toBe(true);
    expect((list as string[]).length).toBeGreaterThan(0);
    for (const d of list as string[]) expect(d).toMatch(/^(\*\.)?[a-z0-9.-]+$/);
    expect(r.body.isolation.network).toMatchObject({
      off: true,
      restricted: true,
      open: "slirp4netns",
      blackhole: true,
    });
  });
});

describe("network off", () => {
  let id: string;
  beforeAll(async () => {
    id = await sandbox({ network: "off" });
  });

  it("has only loopback", async () => {
    const r = await run(id, "ip -o link; echo ---; tail -n +3 /proc/net/dev | cut -d: -f1");
    expect(r.exit_code).toBe(0);
    const [links, dev] = r.stdout.split("---\n") as [string, string];
    expect(links.trim().split("\n")).toHaveLength(1);
    expect(links).toMatch(/^1: lo:/);
    expect(dev.trim().split(/\s+/)).toEqual(["lo"]);
    const env = await run(id, "env | grep -i _proxy || true");
    expect(env.stdout).toBe("");
  });

  it("cannot reach the host's loopback nor the fake internet", async () => {
    for (const url of [hostLo.url, `http://${fi.ip}/`, hostVeth.url, `http://${fi.privateIp}/`]) {
      const r = await run(id, `curl -s -m 2 ${sh(url)}; echo "rc=$?"`);
      expect(r.stdout, url).not.toContain(HOST_SECRET);
      expect(r.stdout, url).not.toContain(FAKE_GREETING);
      expect(r.stdout, url).not.toMatch(/rc=0$/m);
    }
    expect(hostLo.hits()).toBe(0);
    expect(hostVeth.hits()).toBe(0);
  });
});

describe("network restricted", () => {
  let id: string;
  beforeAll(async () => {
    id = await sandbox({ network: "restricted", allow_domains: ["allowed.test"] });
  });

  it("sets HTTPS_PROXY to the in-sandbox relay", async () => {
    const r = await run(id, 'echo "$HTTPS_PROXY"');
    expect(r.stdout.trim()).toBe("http://127.0.0.1:3128");
  });

  it("reaches an allow-listed host over HTTPS through the proxy", async () => {
    const r = await run(id, "curl -sk -m 5 https://allowed.test/");
    expect(r.stderr).toBe("");
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toContain(FAKE_GREETING);
    expect(await fi.requests()).toContain(`https allowed.test / from ${fi.hostIp}`);
  });

  it("verifies TLS end to end (the tunnel is opaque: the sandbox sees the server's own certificate)", async () => {
    const put = await run(
      id,
      `printf '%s' ${sh(fi.certPem)} > /tmp/fi.pem && curl -s -m 5 --cacert /tmp/fi.pem https://allowed.test/`,
    );
    expect(put.exit_code).toBe(0);
    expect(put.stdout).toContain(FAKE_GREETING);
  });

  it("refuses a host that is not on the allow list (proxy 403)", async () => {
    const r = await run(id, "curl -sk -m 5 -o /dev/null -w '%{http_connect}' https://denied.test/; echo \" rc=$?\"");
    expect(r.stdout).toMatch(/^403 rc=56/);
  });

  it("has no route but the proxy: direct connections fail", async () => {
    for (const url of [`https://${fi.ip}/`, `http://${fi.ip}/`, `http://${fi.privateIp}/`]) {
      const r = await run(id, `curl --noproxy '*' -sk -m 2 ${sh(url)}; echo "rc=$?"`);
      expect(r.stdout, url).not.toContain(FAKE_GREETING);
      expect(r.stdout, url).not.toMatch(/rc=0$/m);
    }
    const links = await run(id, "tail -n +3 /proc/net/dev | cut -d: -f1");
    expect(links.stdout.trim().split(/\s+/)).toEqual(["lo"]);
  });

  it("refuses plain HTTP through the proxy", async () => {
    const r = await run(id, "curl -s -m 5 -w '\\ncode=%{http_code}' http://allowed.test/");
    expect(r.stdout).not.toContain(FAKE_GREETING);
    expect(r.stdout).toContain("code=403");
  });

  it("refuses CONNECT to any port but 443, and to IP literals", async () => {
    const port80 = await run(
      id,
      "curl -s -m 5 -p -o /dev/null -w '%{http_connect}' http://allowed.test/; echo \" rc=$?\"",
    );
    expect(port80.stdout).toMatch(/^403 /);
    const literal = await run(id, `curl -sk -m 5 -o /dev/null -w '%{http_connect}' https://${fi.ip}/; echo " rc=$?"`);
    expect(literal.stdout).toMatch(/^403 /);
    const loopback = await run(id, `curl -s -m 5 -p -x http://127.0.0.1:3128 ${sh(hostLo.url)}; echo " rc=$?"`);
    expect(loopback.stdout).not.toContain(HOST_SECRET);
    expect(loopback.stdout).not.toMatch(/rc=0$/m);
    const raw = await run(
      id,
      `printf 'CONNECT allowed.test:22 HTTP/1.1\\r\\nHost: allowed.test:22\\r\\n\\r\\n' | curl -s -m 3 telnet://127.0.0.1:3128 | head -1`,
    );
    expect(raw.stdout).toMatch(/^HTTP\/1\.1 403/);
    expect(hostLo.hits()).toBe(0);
  });

  it("cannot reach the host's loopback", async () => {
    for (const url of [hostLo.url, `http://localhost:${hostLo.port}/`]) {
      const r = await run(id, `curl -s -m 2 ${sh(url)}; echo "rc=$?"`);
      expect(r.stdout, url).not.toContain(HOST_SECRET);
      expect(r.stdout, url).not.toMatch(/rc=0$/m);
    }
    expect(hostLo.hits()).toBe(0);
  });

  it("refuses allow-listed names that resolve to loopback, the host itself or private networks", async () => {
    const names = ["local.test", "zero.test", "zero6.test", "mapped.test", "self.test", "lan.test"];
    const bad = await sandbox({ network: "restricted", allow_domains: names });
    const before = (await fi.requests()).length;
    const got: Record<string, string> = {};
    for (const name of names) {
      const r = await run(bad, `curl -sk -m 5 -o /dev/null -w '%{http_connect}' https://${name}/; echo " rc=$?"`);
      got[name] = r.stdout.trim();
    }
    // 403 from the proxy's own check; a 502 would mean it tried to connect.
    expect(got).toEqual(Object.fromEntries(names.map((n) => [n, "403 rc=56"])));
    expect((await fi.requests()).length).toBe(before);
    expect(hostLo.hits() + hostVeth.hits()).toBe(0);
  });

  it("runs its relay as the sandbox's uid, inside the sandbox's cgroups, with bounded fan-out", async () => {
    const mine = () => [...relays()].filter(([, i]) => i.comm === "socat" && i.cwd.includes(id)).map(([pid]) => pid);
    // Bounded: 300 connections held for 6 s (longer than the 3 s of sampling below).
    const py =
      "import socket, time\nt = time.time()\ns = []\nfor i in range(300):\n    s.append(socket.create_connection(('127.0.0.1', 3128), timeout=2))\nprint('open', len(s), round(time.time() - t, 2), flush=True)\ntime.sleep(6)";
    const held = exec(e, id, 'python3 -c "$PY" 2>&1 | tail -1', { env: { PY: py }, timeout_seconds: 20 });
    let peak = 0;
    for (let i = 0; i < 30; i++) {
      peak = Math.max(peak, mine().length);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pids = mine();
    expect(pids.length).toBeGreaterThan(0);
    let checked = 0;
    for (const pid of pids) {
      const seen = liveProcess(pid);
      // A connection child that is already exiting reads "/" on cgroup v1 (the kernel prints
      // the root for PF_EXITING tasks): it says nothing about where it ran.
      if (!seen) continue;
      checked++;
      const uids = seen.status
        .match(/Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/)!
        .slice(1)
        .map(Number);
      expect(
        uids.every((u) => u === uids[0] && u >= 1000),
        `socat ${pid} uids ${uids.join(" ")}`,
      ).toBe(true);
      expect(seen.status).toMatch(/CapEff:\s+0+\n/);
      expect(seen.pidsCgroup, `socat ${pid}`).toMatch(new RegExp(`/${cgroupNameOf(e, id)}$`));
      let environ = "";
      try {
        environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      expect(environ, `socat ${pid} environment`).not.toContain(ENV_CANARY);
    }
    expect(checked).toBeGreaterThan(0);
    // One listener plus at most 256 connection children.
    expect(peak).toBeLessThanOrEqual(257);
    const h = await held;
    // All 300 connect at once, quickly (a listen backlog of 5 once cost 1 s per overflowing connection).
    const m = h.stdout.match(/open (\d+) ([\d.]+)/);
    expect(m, h.stdout).not.toBeNull();
    expect(Number(m![1])).toBe(300);
    expect(Number(m![2])).toBeLessThan(5);
    expect(peak).toBeGreaterThan(100);
    expect((await run(id, "curl -sk -m 5 https://allowed.test/")).stdout).toContain(FAKE_GREETING);
  });

  it("uses the default egress list when allow_domains is omitted: allowed.test is refused", async () => {
    const def = await sandbox({ network: "restricted" });
    const r = await run(def, "curl -sk -m 5 -o /dev/null -w '%{http_connect}' https://allowed.test/; echo \" rc=$?\"");
    expect(r.stdout).toMatch(/^403 rc=56/);
    const view = await e.api("GET", `/sandboxes/${def}`);
    expect(view.body.network).toBe("restricted");
  });
});

describe("network open", () => {
  let id: string;
  beforeAll(async () => {
    id = await sandbox({ network: "open" });
  });

  it("reaches a host outside any list", async () => {
    const r = await run(id, `curl -s -m 5 http://${fi.ip}/`);
    expect(r.exit_code).toBe(0);
    expect(r.stdout).toContain(FAKE_GREETING);
    const env = await run(id, "env | grep -i _proxy || true");
    expect(env.stdout).toBe("");
  });

  it("cannot reach the host's loopback (slirp4netns --disable-host-loopback)", async () => {
    for (const url of [`http://10.0.2.2:${hostLo.port}/`, hostLo.url, `http://localhost:${hostLo.port}/`]) {
      const r = await run(id, `curl -s -m 2 ${sh(url)}; echo "rc=$?"`);
      expect(r.stdout, url).not.toContain(HOST_SECRET);
      expect(r.stdout, url).not.toMatch(/rc=0$/m);
    }
    expect(hostLo.hits()).toBe(0);
  });

  it("cannot reach the host through its other addresses, nor private networks", async () => {
    const urls = [
      hostVeth.url,
      `http://10.0.2.2:${hostVeth.port}/`,
      `http://${fi.privateIp}/`,
      `http://${fi.hostIp}:${hostLo.port}/`,
    ];
    const before = (await fi.requests()).length;
    for (const url of urls) {
      const r = await run(id, `curl -s -m 2 ${sh(url)}; echo "rc=$?"`);
      expect(r.stdout, url).not.toContain(HOST_SECRET);
      expect(r.stdout, url).not.toContain(FAKE_GREETING);
      expect(r.stdout, url).not.toMatch(/rc=0$/m);
    }
    expect(hostVeth.hits()).toBe(0);
    expect((await fi.requests()).length).toBe(before);
  });
});

describe("teardown of network helpers", () => {
  it("pause, resume, and terminate while paused work for restricted and open sandboxes", async () => {
    const r = await sandbox({ network: "restricted", allow_domains: ["allowed.test"] });
    const o = await sandbox({ network: "open" });
    const helpers = [...helpersOf(r), ...helpersOf(o)];
    expect(helpers.length).toBe(2);
    for (const id of [r, o]) {
      expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
      expect((await e.api("POST", `/sandboxes/${id}/resume`)).status).toBe(200);
    }
    expect((await run(r, "curl -sk -m 5 https://allowed.test/")).stdout).toContain(FAKE_GREETING);
    expect((await run(o, `curl -s -m 5 http://${fi.ip}/`)).stdout).toContain(FAKE_GREETING);
    for (const id of [r, o]) expect((await e.api("POST", `/sandboxes/${id}/pause`)).status).toBe(200);
    const t0 = Date.now();
    await terminate(r);
    await terminate(o);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(await waitGone(helpers, 3000)).toEqual([]);
    expect((await execFileP("nft", ["list", "tables"])).stdout).not.toContain(o.toLowerCase());
  }, 30_000);

  it("terminating restricted and open sandboxes leaves no socat or slirp4netns behind", async () => {
    const before = new Set(relays().keys());
    const r = await sandbox({ network: "restricted", allow_domains: ["allowed.test"] });
    const o = await sandbox({ network: "open" });
    expect((await run(r, "curl -sk -m 5 https://allowed.test/")).stdout).toContain(FAKE_GREETING);
    expect((await run(o, `curl -s -m 5 http://${fi.ip}/`)).stdout).toContain(FAKE_GREETING);
    const mine = [...relays()].filter(([pid]) => !before.has(pid));
    const tablesOf = async () =>
      (await execFileP("nft", ["list", "tables"])).stdout.split("\n").filter((l) => l.includes(o.toLowerCase()));
    // Its per-sandbox nftables table (named after the sandbox id) exists while it runs.
    expect(await tablesOf()).toHaveLength(1);
    const comms = mine.map(([, i]) => i.comm).sort();
    expect(comms).toContain("socat");
    expect(comms).toContain("slirp4netns");
    // Each helper runs inside its own sandbox's cgroups.
    expect(helpersOf(r).map((p) => comm(p))).toEqual(["socat"]);
    expect(helpersOf(o).map((p) => comm(p))).toEqual(["slirp4netns"]);
    // It runs in its sandbox's directory, which its command line does not name.
    const socat = mine.find(([, i]) => i.comm === "socat")![1];
    expect(socat.cwd).toContain(r);
    expect(socat.cmd).not.toContain(r.slice(4));
    await terminate(r);
    await terminate(o);
    expect(
      await waitGone(
        mine.map(([pid]) => pid),
        3000,
      ),
    ).toEqual([]);
    expect(await tablesOf()).toEqual([]);
    // Their sandbox dirs (with the proxy socket) are gone too.
    expect(fs.existsSync(`${e.dataDir}/engine/sbx/${r}`)).toBe(false);
  });
});

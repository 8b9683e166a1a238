import fs from "node:fs";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { hostRequest, previewHostOf, serveInSandbox } from "./helpers/previews.js";
import { createTemplate, waitBuilt } from "./helpers/templates.js";

/**
 * The seccomp filter (runtime/seccomp.ts, seccomp-policy.ts) seen from inside real sandboxes: the
 * dangerous calls answer EPERM on every way into a sandbox (plain exec, streaming exec, PTY), the
 * 32-bit ABIs kill the caller, the relays run filtered, and ordinary tools still work. A second
 * engine with the filter switched off (ORKESTR_ENGINE_DISABLE=seccomp) runs the same probes and
 * shows they do reach the kernel there, so every EPERM asserted below is the filter's doing.
 */

/**
 * Calls each syscall by its x86_64 number through libc's syscall() and prints the errno (0 when it
 * succeeded) as one JSON line. The arguments are chosen so that, without a filter, the kernel
 * answers something other than EPERM for an unprivileged caller (EFAULT, EINVAL, ENOSYS, success...):
 * see the control engine's test. pivot_root and fsopen are refused by the kernel itself too.
 */
const PROBE = String.raw`
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
PROBES = {
  "io_uring_setup": (425, 1, 0), "bpf": (321, 0, 0, 0), "keyctl": (250, 0, 0), "perf_event_open": (298, 0, 0, -1, -1, 0),
  "userfaultfd": (323, 1), "mount": (165, 0, 0, 0, 0, 0), "unshare_newuser": (272, 0x10000000), "add_key": (248, 0, 0, 0, 0, 0),
  "open_by_handle_at": (304, -1, 0, 0), "kexec_load": (246, 0, 0, 0, 0), "request_key": (249, 0, 0, 0, 0),
  "init_module": (175, 0, 0, 0), "setns": (308, -1, 0), "name_to_handle_at": (303, -1, 0, 0, 0, 0), "socket_vsock": (41, 40, 1, 0),
  "personality_addr_no_randomize": (135, 0x0040000), "clone3": (435, 0, 0), "pivot_root": (155, 0, 0), "fsopen": (430, 0, 0),
}
out = {}
for name, (nr, *args) in PROBES.items():
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    out[name] = ctypes.get_errno() if r == -1 else 0
print("PROBE " + json.dumps(out, sort_keys=True))
`;

/** The ten calls the security review named, each of which must answer EPERM. */
const MUST_BE_EPERM = [
  "io_uring_setup",
  "bpf",
  "keyctl",
  "perf_event_open",
  "userfaultfd",
  "mount",
  "unshare_newuser",
  "add_key",
  "open_by_handle_at",
  "kexec_load",
];
/** Further calls the filter answers EPERM. */
const ALSO_EPERM = [
  "request_key",
  "init_module",
  "setns",
  "name_to_handle_at",
  "socket_vsock",
  "personality_addr_no_randomize",
  "pivot_root",
  "fsopen",
];
/** Refused by the kernel for an unprivileged caller even without a filter: not evidence either way. */
const KERNEL_REFUSES_ANYWAY = ["pivot_root", "fsopen"];

/**
 * A 32-bit system call from a 64-bit process: getpid (i386 number 20) through `int 0x80`, from a
 * page of machine code (mov eax, 20; int 0x80; ret). Without a filter the kernel's IA32 emulation
 * answers the pid; the filter kills the process (SIGSYS: exit 159).
 */
const INT80 = String.raw`
import ctypes, mmap, os, sys
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))
f = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print("int80", f() == os.getpid(), flush=True)
`;
/** An x32 system call (getpid with the x32 bit): the kernel here has no x32 ABI (ENOSYS), the filter kills. */
const X32 = String.raw`
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(ctypes.c_long(0x40000000 | 39))
print("x32", r, ctypes.get_errno(), flush=True)
`;

let e: EngineHandle;
let ctl: EngineHandle;
let id: string;
let ctlId: string;

async function put(engine: EngineHandle, sbx: string, path: string, content: string): Promise<void> {
  const r = await engine.api("POST", `/sandboxes/${sbx}/files`, { path, content, encoding: "utf8" });
  if (r.status !== 201) throw new Error(`writing ${path}: ${r.status} ${r.text}`);
}

function probeResult(text: string): Record<string, number> {
  const m = text.match(/PROBE (\{.*\})/);
  if (!m) throw new Error(`no probe output in: ${text}`);
  return JSON.parse(m[1]!) as Record<string, number>;
}

beforeAll(async () => {
  [e, ctl] = await Promise.all([startEngine(), startEngine({ env: { ORKESTR_ENGINE_DISABLE: "seccomp" } })]);
  [id, ctlId] = await Promise.all([createSandbox(e), createSandbox(ctl)]);
  for (const [engine, sbx] of [
    [e, id],
    [ctl, ctlId],
  ] as const) {
    await put(engine, sbx, "/workspace/probe.py", PROBE);
    await put(engine, sbx, "/workspace/int80.py", INT80);
    await put(engine, sbx, "/workspace/x32.py", X32);
  }
});

afterAll(async () => {
  for (const engine of [e, ctl]) {
    await engine?.stop();
    if (engine?.dataDir) fs.rmSync(engine.dataDir, { recursive: true, force: true });
  }
});

describe("seccomp", () => {
  it("is reported enforced in limits.isolation and at start, and degraded with its reason when off", async () => {
    const iso = (await e.api("GET", "/sandboxes/limits")).body.isolation;
    expect(iso.seccomp).toMatchObject({ enforced: true, blocked_abis: ["i386", "x32"], reason: null });
    expect(iso.seccomp.filter_instructions).toBeGreaterThan(100);
    expect(iso.enforced.join("\n")).toMatch(/seccomp on every sandbox process/);
    expect(e.log()).toMatch(/seccomp enforced/);
    const off = (await ctl.api("GET", "/sandboxes/limits")).body.isolation;
    expect(off.seccomp).toMatchObject({ enforced: false, reason: "disabled by ORKESTR_ENGINE_DISABLE" });
    expect(off.degraded.join("\n")).toMatch(/seccomp unavailable \(disabled by ORKESTR_ENGINE_DISABLE\)/);
    expect(ctl.log()).toMatch(/degraded: seccomp unavailable/);
  });

  it("a plain exec runs under one filter, with nothing of the loader left open", async () => {
    const r = await exec(
      e,
      id,
      "grep -E '^(Seccomp|Seccomp_filters|NoNewPrivs):' /proc/self/status /proc/1/status; ls -l /proc/self/fd/",
    );
    expect(r.stdout).toMatch(/\/proc\/self\/status:Seccomp:\s+2\n/);
    expect(r.stdout).toMatch(/\/proc\/self\/status:Seccomp_filters:\s+1\n/);
    // The sandbox's init got the same filter from bwrap.
    expect(r.stdout).toMatch(/\/proc\/1\/status:Seccomp:\s+2\n/);
    expect(r.stdout).not.toMatch(/baton-seccomp|filter\.bpf/);
    const ctlStatus = await exec(ctl, ctlId, "grep -E '^Seccomp:' /proc/self/status");
    expect(ctlStatus.stdout).toMatch(/Seccomp:\s+0/);
  });

  it("without the filter the probes reach the kernel (what makes every EPERM below the filter's)", async () => {
    const r = await exec(ctl, ctlId, "python3 /workspace/probe.py");
    const got = probeResult(r.stdout);
    for (const name of [...MUST_BE_EPERM, ...ALSO_EPERM].filter((n) => !KERNEL_REFUSES_ANYWAY.includes(n))) {
      expect(got[name], `${name} without a filter`).not.toBe(1);
    }
    expect(got.clone3, "clone3 without a filter").not.toBe(38);
  });

  it("blocked syscalls answer EPERM (clone3 ENOSYS) from a plain exec", async () => {
    const r = await exec(e, id, "python3 /workspace/probe.py");
    const got = probeResult(r.stdout);
    for (const name of [...MUST_BE_EPERM, ...ALSO_EPERM]) expect(got[name], name).toBe(1);
    expect(got.clone3).toBe(38);
  });

  it("the same from a streaming exec and from a PTY session", async () => {
    const res = await fetch(`${e.url}/sandboxes/${id}/exec/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${e.token}`, "content-type": "application/json" },
      body: JSON.stringify({ command: "python3 /workspace/probe.py" }),
    });
    expect(res.status).toBe(200);
    const frames = (await res.text())
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)) as { stream?: string; data?: string });
    const streamed = probeResult(
      frames
        .filter((f) => f.stream === "stdout")
        .map((f) => f.data)
        .join(""),
    );

    const pty = await e.api("POST", `/sandboxes/${id}/pty`, {
      command: "python3 /workspace/probe.py; grep '^Seccomp:' /proc/self/status",
    });
    expect(pty.status).toBe(201);
    const ws = new WebSocket(e.origin.replace(/^http/, "ws") + pty.body.ws_path, {
      headers: { authorization: `Bearer ${e.token}` },
    });
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no exit from the PTY session; output: ${out}`)), 20_000);
      ws.on("message", (data, binary) => {
        if (binary) out += Buffer.from(data as Buffer).toString("utf8");
        else if ((JSON.parse(String(data)) as { type?: string }).type === "exit") {
          clearTimeout(t);
          resolve();
        }
      });
      ws.once("error", reject);
    });
    ws.close();
    const viaPty = probeResult(out);
    expect(out).toMatch(/Seccomp:\s+2/);
    for (const got of [streamed, viaPty]) {
      for (const name of [...MUST_BE_EPERM, ...ALSO_EPERM]) expect(got[name], name).toBe(1);
      expect(got.clone3).toBe(38);
    }
  });

  it("i386 (int 0x80) and x32 system calls kill the process", async () => {
    // Without the filter int 0x80 reaches the kernel's IA32 emulation (or, on a kernel or VM that
    // does not deliver it as a system call, faults: SIGSEGV, not SIGSYS) and the x32 call returns.
    const open = await exec(
      ctl,
      ctlId,
      "python3 /workspace/int80.py; echo rc=$?; python3 /workspace/x32.py; echo rc=$?",
    );
    expect(open.stdout).toMatch(/(int80 True\nrc=0|rc=139)\n/);
    expect(open.stdout).toMatch(/x32 -?\d+ \d+\nrc=0\n/);
    const int80IsASyscallHere = /int80 True/.test(open.stdout);
    const filtered = await exec(
      e,
      id,
      "python3 /workspace/int80.py; echo rc=$?; python3 /workspace/x32.py; echo rc=$?",
    );
    expect(filtered.stdout).not.toMatch(/int80|x32 /);
    // Where int 0x80 is a system call the filter kills it (SIGSYS, 159); where the machine never
    // makes it one, it faults as without the filter, and the filter has nothing to see.
    expect(filtered.stdout).toMatch(int80IsASyscallHere ? /^rc=159\n/ : /^rc=(159|139)\n/);
    expect(filtered.stdout).toMatch(/\nrc=159\n$/);
  });

  it("Python (threads, subprocess), Node (fs, worker threads), pip, venv with a local wheel and git still work", async () => {
    const wheel = String.raw`
import base64, hashlib, zipfile
name, ver = "batondemo", "0.1"
files = {f"{name}/__init__.py": "VALUE = 42\n",
         f"{name}-{ver}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {ver}\n",
         f"{name}-{ver}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: baton-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = []
with zipfile.ZipFile(f"/workspace/{name}-{ver}-py3-none-any.whl", "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
        digest = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{p},sha256={digest},{len(c.encode())}")
    record.append(f"{name}-{ver}.dist-info/RECORD,,")
    z.writestr(f"{name}-{ver}.dist-info/RECORD", "\n".join(record) + "\n")
`;
    await put(e, id, "/workspace/mkwheel.py", wheel);
    const script = [
      `python3 -c "import subprocess, threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join(); print(subprocess.run(['echo', 'subprocess'], capture_output=True, text=True).stdout.strip())"`,
      `node -e "const { Worker } = require('worker_threads'); new Worker('require(\\"worker_threads\\").parentPort.postMessage(6 * 7)', { eval: true }).on('message', (m) => console.log('worker', m))"`,
      `node -e "const fs = require('fs/promises'); (async () => { await fs.writeFile('/tmp/n.txt', 'x'.repeat(1e6)); console.log('node-fs', (await fs.readFile('/tmp/n.txt')).length) })()"`,
      "python3 -m pip --version | cut -d' ' -f1",
      "python3 /workspace/mkwheel.py && python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -q --no-index --disable-pip-version-check /workspace/batondemo-0.1-py3-none-any.whl && /tmp/venv/bin/python -c 'import batondemo; print(\"wheel\", batondemo.VALUE)'",
      "cd /tmp && git init -q repo && cd repo && echo hi > a && git add a && git -c user.name=t -c user.email=t@example.invalid commit -qm one && echo commits $(git rev-list --count HEAD)",
    ].join(" && ");
    const r = await exec(e, id, script, { timeout_seconds: 120 });
    expect(r.stderr).toBe("");
    expect(r.exit_code).toBe(0);
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([
      "thread",
      "subprocess",
      "worker 42",
      "node-fs 1000000",
      "pip",
      "wheel 42",
      "commits 1",
    ]);
  }, 180_000);

  it("template build steps are filtered and hold no capability (user namespace or not)", async () => {
    // A build's steps are children of its init (runtime/template-build.ts), which bwrap started
    // with --cap-drop ALL under the filter; nothing enters a build from outside. With a user
    // namespace a step is uid 0 there (the build slot's uid on the host); without one (bwrap-root)
    // it is that unprivileged host uid itself, and bwrap leaves the bounding set full: with
    // no_new_privs and an empty permitted set, an exec cannot gain anything from it (the kernel caps
    // a no_new_privs exec at the caller's permitted set, setuid bits and file capabilities
    // included), which the step's second probe checks.
    const rootMode = await startEngine({ env: { ORKESTR_ENGINE_DISABLE: "userns" } });
    try {
      const step = `id -u; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status; python3 -c "import ctypes; l = ctypes.CDLL(None, use_errno=True); print('keyctl', l.syscall(250, 0, 0), ctypes.get_errno())"; /bin/sh -c "grep -E '^CapEff:' /proc/self/status | sed 's/CapEff/ExecEff/'"`;
      for (const engine of [e, rootMode]) {
        const iso = (await engine.api("GET", "/sandboxes/limits")).body.isolation;
        const t = await createTemplate(engine, { name: `caps-${iso.mode}`, steps: [step] });
        expect(await waitBuilt(engine, t.id)).toMatchObject({ status: "ready" });
        const lines = (await engine.api("GET", `/templates/${t.id}/logs?limit=1000`)).body.lines as {
          stream: string;
          data: string;
        }[];
        const out = lines
          .filter((l) => l.stream === "stdout")
          .map((l) => l.data)
          .join("");
        const uid = Number(/^(\d+)\n/.exec(out)?.[1]);
        if (iso.mode === "bwrap-userns") expect(uid, iso.mode).toBe(0);
        else expect(uid, iso.mode).toBe(Number((iso.builds.host_uids as string).split("-")[1]));
        const empty =
          iso.mode === "bwrap-userns"
            ? ["CapEff", "CapPrm", "CapBnd", "CapAmb", "ExecEff"]
            : ["CapEff", "CapPrm", "CapAmb", "ExecEff"];
        for (const set of empty)
          expect(out, `${iso.mode} ${set}`).toMatch(new RegExp(`${set}:\\s+0000000000000000\\n`));
        expect(out, iso.mode).toMatch(/NoNewPrivs:\s+1\n/);
        expect(out, iso.mode).toMatch(/Seccomp:\s+2\n/);
        expect(out, iso.mode).toMatch(/keyctl -1 1\n/);
      }
    } finally {
      await rootMode.stop();
      if (rootMode.dataDir) fs.rmSync(rootMode.dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it("the egress and preview relays run under the filter too", async () => {
    const sbx = await createSandbox(e, { network: "restricted" });
    await serveInSandbox(e, sbx, 8000, "relay-test");
    const r = await hostRequest(e, previewHostOf(e, sbx, 8000), "/");
    expect(r.status).toBe(200);
    const relays: string[] = [];
    for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        // Relays run in their sandbox's directory (their command lines name no sandbox).
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
        if (!cmd.startsWith("socat ") || !fs.readlinkSync(`/proc/${pid}/cwd`).includes(`/sbx/${sbx}`)) continue;
        const seccomp = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/^Seccomp:\s+(\d)/m)?.[1];
        relays.push(`${cmd.includes("egress.sock") ? "egress" : "preview"} seccomp=${seccomp}`);
      } catch {
        /* exited meanwhile */
      }
    }
    expect(relays).toContain("egress seccomp=2");
    expect(relays).toContain("preview seccomp=2");
    expect(relays.filter((x) => !x.endsWith("seccomp=2"))).toEqual([]);
    expect((await e.api("DELETE", `/sandboxes/${sbx}`)).status).toBe(204);
  });
});

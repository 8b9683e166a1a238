import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, enginePath, exec, startEngine, type EngineHandle } from "./helpers/engine.js";
import { createTemplate, stepOutput, waitBuilt, type Json } from "./helpers/templates.js";

/**
 * A template build writes its own root filesystem, and the engine runs as root (security issue,
 * item 3). The engine entered the build (and, without user namespaces, started a template's
 * sandboxes) as root and only then executed /usr/bin/setpriv and /usr/bin/prlimit *from the
 * build's own tree* to drop privileges: a step that replaced them ran the next step with every
 * capability (host root without user namespaces). A layer's /etc/ld.so.preload was likewise
 * loaded into those privileged processes. Pinned here against a real engine.
 *
 * Each planted tool records how it ran and, if it ever holds a capability, tries what only a
 * privileged process can do: create a file in a root-owned mode-000 directory of the layer, and
 * mount the host's disk to write into a host directory this test made. The assertions look for
 * the traces; with the old engine they were all there (see the commit that added this file).
 */

/** Every step and planted tool sees the host's /usr: a compiler there lets a step build a real preload library. */
const HAVE_CC = fs.existsSync("/usr/bin/cc");

/** The block device, type and in-filesystem path of the host directory, for the escape attempt. */
function hostDisk(dir: string): { dev: [number, number]; fstype: string; rel: string } {
  const [majmin, fstype, fsroot, target] = execFileSync(
    "findmnt",
    ["-n", "-o", "MAJ:MIN,FSTYPE,FSROOT,TARGET", "-T", dir],
    { encoding: "utf8" },
  )
    .trim()
    .split(/\s+/);
  const [maj, min] = majmin!.split(":").map(Number);
  const below = path.relative(target!, dir);
  return { dev: [maj!, min!], fstype: fstype!, rel: path.join(fsroot!, below) };
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** What a privileged process could do and an unprivileged one cannot; each success leaves a named trace. */
function escapeScript(hostDir: string): string {
  const disk = hostDisk(hostDir);
  return `#!/bin/sh
who=\${1:-unknown}
# The layer's /opt/locked is root's and mode 000: only CAP_DAC_OVERRIDE gets a file into it.
touch "/opt/locked/$who" 2>/dev/null
# The host's disk, mounted from inside: needs CAP_SYS_ADMIN and CAP_MKNOD of the host.
m=$(mktemp -d /tmp/esc.XXXXXX 2>/dev/null) || exit 0
if mount -t tmpfs baton-esc "$m" 2>/dev/null; then
  if mknod "$m/disk" b ${disk.dev[0]} ${disk.dev[1]} 2>/dev/null && mkdir "$m/fs" && mount -t ${disk.fstype} "$m/disk" "$m/fs" 2>/dev/null; then
    echo "$who" > "$m/fs${disk.rel}/escaped-$who-$$" 2>/dev/null
    umount "$m/fs"
  fi
  umount "$m"
fi
rmdir "$m" 2>/dev/null
exit 0
`;
}

/** Planted over setpriv, prlimit and nsenter: records how it ran, then runs the rest of its command line without dropping anything. */
const FAKE_TOOL = `#!/bin/sh
caps=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
line="$(basename "$0") uid=$(id -u) caps=$caps"
{ echo "$line" >> /opt/fake.log; } 2>/dev/null || { echo "$line" >> /tmp/fake.log; } 2>/dev/null
[ "$caps" = 0000000000000000 ] || /usr/local/bin/baton-escape "fake-$(basename "$0")"
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
[ $# -gt 0 ] && shift
exec "$@"
`;

/** /etc/ld.so.preload's library: silent in an unprivileged process, leaves traces in a privileged one. */
const PRELOAD_C = `#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void baton_preload(void) {
  char buf[4096], comm[64] = "unknown", p[160];
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = 0;
  char *c = strstr(buf, "CapEff:");
  if (!c) return;
  for (c += 7; *c == ' ' || *c == '\\t'; c++) {}
  if (strncmp(c, "0000000000000000", 16) == 0) return;
  fd = open("/proc/self/comm", O_RDONLY);
  if (fd >= 0) { n = read(fd, comm, sizeof comm - 1); if (n > 0) comm[n - 1] = 0; close(fd); }
  snprintf(p, sizeof p, "/opt/locked/preload-%s", comm);
  close(open(p, O_CREAT | O_WRONLY, 0644));
  snprintf(p, sizeof p, "/tmp/preload-privileged-%s", comm);
  close(open(p, O_CREAT | O_WRONLY, 0644));
}
`;

function plantSteps(hostDir: string): string[] {
  const plant = [
    "set -e",
    "mkdir -p /opt/locked && chmod 000 /opt/locked",
    `echo ${b64(escapeScript(hostDir))} | base64 -d > /usr/local/bin/baton-escape && chmod 755 /usr/local/bin/baton-escape`,
    `echo ${b64(FAKE_TOOL)} | base64 -d > /usr/local/bin/baton-fake && chmod 755 /usr/local/bin/baton-fake`,
    "for t in setpriv prlimit nsenter; do cp /usr/local/bin/baton-fake /usr/bin/$t; done",
  ];
  if (HAVE_CC) {
    plant.push(
      `echo ${b64(PRELOAD_C)} | base64 -d > /tmp/preload.c`,
      "cc -shared -fPIC -O1 -o /usr/local/lib/baton-preload.so /tmp/preload.c",
      "echo /usr/local/lib/baton-preload.so > /etc/ld.so.preload",
    );
  }
  return [
    plant.join("\n"),
    // Runs after the planted tools are in place: whatever entered the build for it would run them.
    "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status; id; /usr/local/bin/baton-escape step2; echo step2-done",
  ];
}

function layerPath(e: EngineHandle, id: string, ...rel: string[]): string {
  return enginePath(e, path.join(e.dataDir!, "engine", "templates", id, "layer", ...rel));
}

function statusField(text: string, name: string): string | undefined {
  return new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(text)?.[1];
}

/** Lines the planted tools logged: every one must show a process without capabilities. */
function privilegedRuns(log: string): string[] {
  return log.split("\n").filter((l) => l.trim() && !/ caps=0{16}$/.test(l));
}

const engines: EngineHandle[] = [];
afterAll(async () => {
  for (const e of engines) await e.stop();
});

for (const mode of ["user namespaces", "no user namespaces, no cgroups (bwrap as root, rlimits)"] as const) {
  describe(`a build that replaces setpriv, prlimit, nsenter and /etc/ld.so.preload (${mode})`, () => {
    let e: EngineHandle;
    let tmpl: Json;
    /** A host directory only a process holding the host's capabilities could write into (via the disk). */
    const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-hostdir-"));
    afterAll(() => fs.rmSync(hostDir, { recursive: true, force: true }));
    beforeAll(async () => {
      fs.chmodSync(hostDir, 0o755);
      e = await startEngine(mode === "user namespaces" ? {} : { env: { ORKESTR_ENGINE_DISABLE: "userns,cgroups" } });
      engines.push(e);
      const name = mode === "user namespaces" ? "planted-userns" : "planted-root";
      tmpl = await waitBuilt(e, (await createTemplate(e, { name, steps: plantSteps(hostDir) })).id, 120_000);
    }, 150_000);

    it("builds, and the next step runs without any capability", async () => {
      expect(tmpl.status, JSON.stringify(tmpl.error)).toBe("ready");
      const out = await stepOutput(e, tmpl.id, 1);
      expect(out).toContain("step2-done");
      for (const cap of ["CapInh", "CapPrm", "CapEff", "CapAmb"])
        expect(statusField(out, cap), `${cap} in:\n${out}`).toBe("0000000000000000");
      expect(statusField(out, "NoNewPrivs")).toBe("1");
      // Root of its own user namespace where there are user namespaces, else the build slot's
      // unprivileged uid: never the host's root (issue 20). What it writes is root's in the layer
      // either way (idmapped layers, runtime/overlay.ts).
      const builds = (await e.api("GET", "/sandboxes/limits")).body.isolation.builds;
      if (mode === "user namespaces") {
        expect(builds.user).toBe("userns-root");
        expect(out).toMatch(/^uid=0\(root\) gid=0\(root\)/m);
      } else {
        expect(builds.user).toBe("unprivileged");
        const [low, high] = (builds.host_uids as string).split("-").map(Number);
        const uid = Number(/^uid=(\d+)/m.exec(out)?.[1]);
        expect(uid).toBeGreaterThanOrEqual(low!);
        expect(uid).toBeLessThanOrEqual(high!);
      }
      expect(fs.statSync(layerPath(e, tmpl.id, "usr", "local", "bin", "baton-escape")).uid).toBe(0);
      // The engine's control directory (steps, output FIFOs) is mounted in the build's own /dev, never in the layer.
      expect(fs.existsSync(layerPath(e, tmpl.id, "root", "dev"))).toBe(false);
    });

    it("never ran a planted tool or the preload library with a capability", () => {
      const fakeLog = layerPath(e, tmpl.id, "root", "opt", "fake.log");
      const logged = fs.existsSync(fakeLog) ? fs.readFileSync(fakeLog, "utf8") : "";
      // All traces at once, so a failure shows how far a privileged process got. Nothing but a
      // privileged process can put a file in the mode-000 directory or the host directory.
      expect({
        privilegedRuns: privilegedRuns(logged),
        locked: fs.readdirSync(layerPath(e, tmpl.id, "root", "opt", "locked")),
        hostDir: fs.readdirSync(hostDir),
      }).toEqual({ privilegedRuns: [], locked: [], hostDir: [] });
      if (HAVE_CC)
        expect(fs.readFileSync(layerPath(e, tmpl.id, "etc", "ld.so.preload"), "utf8")).toContain("baton-preload.so");
    });

    it("a sandbox of the template holds no privilege either, from its init to its commands", async () => {
      // Only what the sandbox adds counts here (the build has its own test above).
      const before = new Set(fs.readdirSync(hostDir));
      const s = await createSandbox(e, { template: tmpl.id });
      const r = await exec(
        e,
        s,
        "cat /proc/1/status; echo '<<self>>'; cat /proc/self/status; echo '<<log>>'; cat /tmp/fake.log 2>/dev/null; echo '<<tmp>>'; ls -A /tmp /opt/locked 2>&1",
      );
      const [init, self, log, tmp] = r.stdout.split(/<<\w+>>\n/);
      expect({
        privilegedRuns: privilegedRuns(log!),
        tmp: tmp!.split("\n").filter((l) => /preload-privileged|escaped/.test(l)),
        hostDir: fs.readdirSync(hostDir).filter((f) => !before.has(f)),
      }).toEqual({ privilegedRuns: [], tmp: [], hostDir: [] });
      for (const [who, status] of [
        ["init", init!],
        ["command", self!],
      ] as const) {
        expect(statusField(status, "CapEff"), `${who}:\n${status}`).toBe("0000000000000000");
        expect(statusField(status, "CapPrm"), who).toBe("0000000000000000");
        expect(statusField(status, "NoNewPrivs"), who).toBe("1");
        expect(statusField(status, "Uid"), who).not.toBe("0");
      }
      expect((await e.api("DELETE", `/sandboxes/${s}`)).status).toBe(204);
    });
  });
}

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareSeccomp, type SeccompFilter } from "../src/runtime/seccomp.js";
import {
  ALLOW,
  BLOCKED_SOCKET_FAMILIES,
  CLONE_NS_MASK,
  LAST_KNOWN_NR,
  NEWER_SYSCALL_NRS,
  NOTABLY_BLOCKED,
  PERSONALITY_ALLOWED,
} from "../src/runtime/seccomp-policy.js";

/**
 * The compiled program itself, run through a classic-BPF interpreter over hand-made seccomp_data:
 * the decisions a real kernel would take, including the ones a test inside a sandbox cannot reach
 * on this machine (the kernel has no x32 ABI, so an x32 call fails with ENOSYS filtered or not),
 * arguments with high bits set, and every syscall of the policy one by one.
 */

const AUDIT_ARCH_X86_64 = 0xc000003e;
const AUDIT_ARCH_I386 = 0x40000003;
const RET = { KILL_PROCESS: 0x80000000, ALLOW: 0x7fff0000, EPERM: 0x00050001, ENOSYS: 0x00050026 };

/** Runs a classic-BPF seccomp program (the opcodes libseccomp emits; anything else throws). */
function run(prog: Buffer, data: { nr: number; arch?: number; args?: bigint[] }): number {
  const words = new DataView(new ArrayBuffer(64));
  words.setInt32(0, data.nr, true);
  words.setUint32(4, data.arch ?? AUDIT_ARCH_X86_64, true);
  (data.args ?? []).forEach((a, i) => words.setBigUint64(16 + 8 * i, BigInt.asUintN(64, a), true));
  const mem = new Uint32Array(16);
  let A = 0;
  let X = 0;
  for (let pc = 0, steps = 0; steps < 100_000; steps++) {
    if (pc * 8 >= prog.length) throw new Error(`fell off the program at ${pc}`);
    const code = prog.readUInt16LE(pc * 8);
    const jt = prog[pc * 8 + 2]!;
    const jf = prog[pc * 8 + 3]!;
    const k = prog.readUInt32LE(pc * 8 + 4);
    pc++;
    switch (code) {
      case 0x20:
        A = words.getUint32(k, true);
        break; // ld [k]
      case 0x60:
        A = mem[k]!;
        break; // ld M[k]
      case 0x61:
        X = mem[k]!;
        break; // ldx M[k]
      case 0x02:
        mem[k] = A;
        break; // st M[k]
      case 0x03:
        mem[k] = X;
        break; // stx M[k]
      case 0x54:
        A = (A & k) >>> 0;
        break; // and #k
      case 0x44:
        A = (A | k) >>> 0;
        break; // or #k
      case 0x07:
        X = A;
        break; // tax
      case 0x87:
        A = X;
        break; // txa
      case 0x05:
        pc += k;
        break; // ja
      case 0x15:
        pc += A === k ? jt : jf;
        break; // jeq #k
      case 0x25:
        pc += A > k ? jt : jf;
        break; // jgt #k
      case 0x35:
        pc += A >= k ? jt : jf;
        break; // jge #k
      case 0x45:
        pc += (A & k) !== 0 ? jt : jf;
        break; // jset #k
      case 0x06:
        return k; // ret #k
      case 0x16:
        return A; // ret a
      default:
        throw new Error(`unhandled BPF opcode 0x${code.toString(16)} at ${pc - 1}`);
    }
  }
  throw new Error("the program did not return");
}

let stateDir: string;
let filter: SeccompFilter;
let prog: Buffer;
const nr = new Map<string, number>();

beforeAll(() => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-seccomp-"));
  const setup = prepareSeccomp({ disabled: false, stateDir });
  if (!setup.filter) throw new Error(`no filter: ${setup.reason}`);
  filter = setup.filter;
  prog = fs.readFileSync(filter.bpfPath);
  // Numbers from libseccomp's own table (the helper's `nr` mode), then the policy's for newer ones.
  const names = [
    ...new Set([
      ...ALLOW,
      ...Object.values(NOTABLY_BLOCKED).flat(),
      "clone",
      "clone3",
      "unshare",
      "socket",
      "personality",
      "getpid",
    ]),
  ];
  for (const line of execFileSync(filter.loaderPath, ["nr", ...names], { encoding: "utf8" })
    .trim()
    .split("\n")) {
    const [name, n] = line.split(" ");
    if (Number(n) >= 0) nr.set(name!, Number(n));
  }
  for (const [name, n] of Object.entries(NEWER_SYSCALL_NRS)) nr.set(name, n);
});

afterAll(() => {
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const sys = (name: string) => {
  const n = nr.get(name);
  if (n === undefined) throw new Error(`no x86_64 number for ${name}`);
  return n;
};

describe("the compiled seccomp filter", () => {
  it("is libseccomp's program, read-only to root, with an execute-only loader", () => {
    expect(prog.length % 8).toBe(0);
    expect(filter.instructions).toBe(prog.length / 8);
    // BPF_MAXINSNS: the kernel refuses longer programs.
    expect(filter.instructions).toBeLessThanOrEqual(4096);
    expect(fs.statSync(filter.bpfPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(filter.loaderPath).mode & 0o777).toBe(0o711);
  });

  it("allows every syscall of the allowlist and answers EPERM for every notably blocked one", () => {
    for (const name of ALLOW) expect(run(prog, { nr: sys(name) }), name).toBe(RET.ALLOW);
    for (const [why, names] of Object.entries(NOTABLY_BLOCKED)) {
      // The obsolete ones that x86_64 no longer numbers (nfsservctl...) cannot be called at all.
      for (const name of names.filter((n) => nr.has(n)))
        expect(run(prog, { nr: sys(name) }), `${name} (${why})`).toBe(RET.EPERM);
    }
  });

  it("kills i386 and x32 callers whatever the syscall", () => {
    for (const n of [0, 1, 20, 120, 172, 359])
      expect(run(prog, { nr: n, arch: AUDIT_ARCH_I386 }), `i386 ${n}`).toBe(RET.KILL_PROCESS);
    for (const n of [0, 39, 56, 512, 545]) expect(run(prog, { nr: 0x40000000 | n }), `x32 ${n}`).toBe(RET.KILL_PROCESS);
  });

  it("answers ENOSYS for clone3 and for syscalls newer than the policy", () => {
    expect(run(prog, { nr: sys("clone3") })).toBe(RET.ENOSYS);
    for (const n of [LAST_KNOWN_NR + 1, LAST_KNOWN_NR + 20, 511])
      expect(run(prog, { nr: n }), String(n)).toBe(RET.ENOSYS);
  });

  it("clone and unshare: no namespace flag gets through, high bits or not", () => {
    const threadFlags = 0x003d0f00n; // what glibc passes for pthread_create
    expect(run(prog, { nr: sys("clone"), args: [threadFlags] })).toBe(RET.ALLOW);
    expect(run(prog, { nr: sys("clone"), args: [17n] })).toBe(RET.ALLOW); // fork(): SIGCHLD
    for (let bit = 0; bit < 32; bit++) {
      const flag = 1 << bit;
      if (!(CLONE_NS_MASK & flag)) continue;
      for (const extra of [0n, 1n << 32n, threadFlags]) {
        expect(
          run(prog, { nr: sys("clone"), args: [BigInt(flag >>> 0) | extra] }),
          `clone 0x${flag.toString(16)}`,
        ).toBe(RET.EPERM);
        expect(
          run(prog, { nr: sys("unshare"), args: [BigInt(flag >>> 0) | extra] }),
          `unshare 0x${flag.toString(16)}`,
        ).toBe(RET.EPERM);
      }
    }
    expect(run(prog, { nr: sys("unshare"), args: [0x80n] }), "unshare CLONE_NEWTIME").toBe(RET.EPERM);
    expect(run(prog, { nr: sys("unshare"), args: [0x400n | 0x200n] }), "unshare CLONE_FILES|CLONE_FS").toBe(RET.ALLOW);
  });

  it("socket: every family but AF_ALG and AF_VSOCK, which high bits cannot smuggle past", () => {
    const blocked = Object.values(BLOCKED_SOCKET_FAMILIES);
    for (let family = 0; family < 46; family++) {
      const want = blocked.includes(family) ? RET.EPERM : RET.ALLOW;
      expect(run(prog, { nr: sys("socket"), args: [BigInt(family), 1n, 0n] }), `family ${family}`).toBe(want);
      // The kernel reads the family as an int: 40 | 1 << 32 is AF_VSOCK to it.
      expect(
        run(prog, { nr: sys("socket"), args: [BigInt(family) | (1n << 32n), 1n, 0n] }),
        `family ${family} with high bits`,
      ).toBe(want);
    }
  });

  it("personality: only the values Docker admits", () => {
    for (const v of PERSONALITY_ALLOWED)
      expect(run(prog, { nr: sys("personality"), args: [BigInt(v)] })).toBe(RET.ALLOW);
    for (const v of [
      0x0040000 /* ADDR_NO_RANDOMIZE */, 0x0400000 /* READ_IMPLIES_EXEC */, 0x0200000 /* ADDR_LIMIT_32BIT */,
    ]) {
      expect(run(prog, { nr: sys("personality"), args: [BigInt(v)] }), `0x${v.toString(16)}`).toBe(RET.EPERM);
    }
  });
});

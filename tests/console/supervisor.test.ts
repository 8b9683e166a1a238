import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { backoffMs, restartPolicy, supervise } from "../../scripts/supervisor.mjs";

// The supervisor's policy with a fake clock, timers and children: which child runs, when a restart
// is scheduled and how long it waits. The real processes (engine SIGKILLed under `npm start`, the
// console staying up) are exercised end to end by e2e/supervisor.spec.ts.

class FakeChild extends EventEmitter {
  static next = 100;
  pid = FakeChild.next++;
  signals: string[] = [];
  kill(signal: string) {
    this.signals.push(signal);
  }
  exit(code: number | null, signal: string | null = null) {
    this.emit("exit", code, signal);
  }
}

function harness(policy = { minMs: 1_000, maxMs: 8_000, healthyMs: 60_000 }) {
  let clock = 0;
  const children: FakeChild[] = [];
  const timers: { at: number; fn: () => void }[] = [];
  const logs: string[] = [];
  const handle = supervise({
    name: "engine",
    cmd: "node",
    args: ["engine"],
    env: {},
    policy,
    log: (m: string) => logs.push(m),
    spawnChild: () => {
      const c = new FakeChild();
      children.push(c);
      return c;
    },
    now: () => clock,
    setTimer: (fn: () => void, ms: number) => {
      const t = { at: clock + ms, fn };
      timers.push(t);
      return t;
    },
    clearTimer: (t: { at: number; fn: () => void }) => timers.splice(timers.indexOf(t), 1),
  });
  return {
    handle,
    children,
    logs,
    timers,
    advance(ms: number) {
      clock += ms;
      for (const t of [...timers].sort((a, b) => a.at - b.at)) {
        if (t.at > clock) continue;
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
    },
    /** The delay of the one pending restart. */
    pendingDelay: () => (timers.length === 1 ? timers[0]!.at - clock : null),
  };
}

describe("npm start's supervisor", () => {
  it("backs off exponentially, capped", () => {
    const policy = { minMs: 1_000, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoffMs(n, policy))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it("reads its policy from the environment, falling back to the defaults", () => {
    expect(restartPolicy({})).toEqual({ minMs: 1_000, maxMs: 30_000, healthyMs: 60_000 });
    expect(restartPolicy({ BATON_RESTART_MIN_MS: "500", BATON_RESTART_MAX_MS: "2000" })).toMatchObject({
      minMs: 500,
      maxMs: 2_000,
    });
    // Nonsense is ignored; a cap below the first wait is raised to it.
    expect(restartPolicy({ BATON_RESTART_MIN_MS: "-1", BATON_RESTART_MAX_MS: "x" }).minMs).toBe(1_000);
    expect(restartPolicy({ BATON_RESTART_MIN_MS: "5000", BATON_RESTART_MAX_MS: "10" }).maxMs).toBe(5_000);
  });

  it("restarts a crashed child with growing waits, and from the first wait again after a healthy run", () => {
    const h = harness();
    expect(h.children).toHaveLength(1);
    h.children[0]!.exit(null, "SIGKILL");
    expect(h.pendingDelay()).toBe(1_000);
    expect(h.logs.at(-1)).toMatch(/engine exited \(SIGKILL\) after 0 s; restarting in 1 s \(restart 1/);
    h.advance(1_000);
    expect(h.children).toHaveLength(2);
    // Crashing again at once: the wait doubles, up to the cap.
    for (const expected of [2_000, 4_000, 8_000, 8_000]) {
      h.children.at(-1)!.exit(1);
      expect(h.pendingDelay()).toBe(expected);
      h.advance(expected);
    }
    expect(h.children).toHaveLength(6);
    // A run of a healthy minute resets the backoff.
    h.advance(60_000);
    h.children.at(-1)!.exit(null, "SIGKILL");
    expect(h.pendingDelay()).toBe(1_000);
  });

  it("stops for good on request: the signal goes to the child, no restart follows, a pending one is cancelled", async () => {
    const h = harness();
    const stopped = h.handle.stop("SIGINT");
    expect(h.children[0]!.signals).toEqual(["SIGINT"]);
    h.children[0]!.exit(0);
    await stopped;
    expect(h.timers).toHaveLength(0);
    expect(h.children).toHaveLength(1);

    const crashed = harness();
    crashed.children[0]!.exit(null, "SIGKILL");
    expect(crashed.timers).toHaveLength(1);
    await crashed.handle.stop("SIGTERM");
    expect(crashed.timers).toHaveLength(0);
    crashed.advance(60_000);
    expect(crashed.children).toHaveLength(1);
  });
});

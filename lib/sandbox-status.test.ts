import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appliesTo } from "../components/sandboxes/list/bulk";
import {
  allowsAction,
  FINISHED_STATUSES,
  isFinished,
  isTransitional,
  SANDBOX_STATUSES,
  statusTone,
  TRANSITIONAL_STATUSES,
} from "./sandbox-status";
import { SANDBOX_STATUSES as CONTRACT_STATUSES } from "./orkestr/sandbox-statuses";

describe("sandbox statuses", () => {
  it("lists the contract's eight statuses, live first and finished last", () => {
    expect(SANDBOX_STATUSES).toEqual([
      "running",
      "paused",
      "creating",
      "pausing",
      "resuming",
      "failed",
      "terminated",
      "expired",
    ]);
  });

  it("lists each of the contract's statuses exactly once", () => {
    expect([...SANDBOX_STATUSES].sort()).toEqual([...CONTRACT_STATUSES].sort());
  });

  it("counts terminated, expired and failed as finished, and nothing else", () => {
    expect([...FINISHED_STATUSES].sort()).toEqual(["expired", "failed", "terminated"]);
    expect(SANDBOX_STATUSES.filter(isFinished)).toEqual(["failed", "terminated", "expired"]);
    expect(isFinished("some-newer-status")).toBe(false);
    expect(isFinished("")).toBe(false);
  });

  it("counts creating, pausing and resuming as transitional", () => {
    expect([...TRANSITIONAL_STATUSES].sort()).toEqual(["creating", "pausing", "resuming"]);
    expect(SANDBOX_STATUSES.filter(isTransitional)).toEqual(["creating", "pausing", "resuming"]);
  });

  it("allows pause when running, resume when paused, terminate until finished", () => {
    const allowed = (action: "pause" | "resume" | "terminate") =>
      SANDBOX_STATUSES.filter((s) => allowsAction(s, action));
    expect(allowed("pause")).toEqual(["running"]);
    expect(allowed("resume")).toEqual(["paused"]);
    expect(allowed("terminate")).toEqual(["running", "paused", "creating", "pausing", "resuming"]);
  });

  it("the list's bulk bar skips every finished sandbox, a failed one too", () => {
    // The bulk bar's own copy of the finished set once left out `failed`: it offered to terminate failed sandboxes.
    for (const s of ["terminated", "expired", "failed"]) expect(appliesTo("terminate", s)).toBe(false);
    for (const s of SANDBOX_STATUSES)
      for (const action of ["pause", "resume", "terminate"] as const)
        expect(appliesTo(action, s), `${action} ${s}`).toBe(allowsAction(s, action));
  });

  it("draws each status in one tone, an unknown one neutral", () => {
    expect(Object.fromEntries(SANDBOX_STATUSES.map((s) => [s, statusTone(s)]))).toEqual({
      running: "success",
      paused: "warning",
      creating: "pending",
      pausing: "pending",
      resuming: "pending",
      failed: "destructive",
      terminated: "neutral",
      expired: "neutral",
    });
    expect(statusTone("hibernating")).toBe("neutral");
  });

  it("is the only place that spells out the finished set", () => {
    // A list of two or three of the finished statuses written out anywhere else in the browser code is
    // another copy of the set, which drifts (one forgot `failed`): it must come from here.
    const root = path.resolve(import.meta.dirname, "..");
    const copies: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (/\.tsx?$/.test(name) && !name.endsWith(".test.ts")) {
          const text = readFileSync(file, "utf8");
          const lists =
            text.match(
              /\[[^\]]*\]|new Set\([^)]*\)|(?:status\s*[!=]==\s*"\w+"\s*(?:&&|\|\|)\s*)+status\s*[!=]==\s*"\w+"/g,
            ) ?? [];
          for (const list of lists) {
            const named = ["terminated", "expired", "failed"].filter((s) => list.includes(`"${s}"`));
            if (named.length >= 2) copies.push(`${path.relative(root, file)}: ${list.slice(0, 80)}`);
          }
        }
      }
    };
    for (const dir of ["components", "app"]) walk(path.join(root, dir));
    expect(copies).toEqual([]);
  });
});

import fs from "node:fs";

/**
 * Every process of the machine, as the host sees it: pid, command line (arguments joined by
 * spaces) and the Uid line of its status (real, effective, saved, filesystem). Processes that
 * exit while this reads are left out.
 */
export function hostProcesses(): { pid: number; cmdline: string; uids: number[] }[] {
  const out: { pid: number; cmdline: string; uids: number[] }[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      const uids = /^Uid:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "";
      out.push({ pid: Number(pid), cmdline, uids: uids.trim().split(/\s+/).map(Number) });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

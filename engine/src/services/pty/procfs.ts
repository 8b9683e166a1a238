import fs from "node:fs";

/** What a terminal session reads of /proc: its process tree, session ids and foreground group (host pid numbers). */

export interface ProcStat {
  pid: number;
  sid: number;
  ttyNr: number;
  tpgid: number;
}

export function readStat(pid: number): ProcStat | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name sits in parentheses and may itself contain spaces and parentheses.
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    // f[0]=state f[1]=ppid f[2]=pgrp f[3]=session f[4]=tty_nr f[5]=tpgid (host pid numbers).
    return { pid, sid: Number(f[3]), ttyNr: Number(f[4]), tpgid: Number(f[5]) };
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    try {
      for (const c of fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" "))
        if (c.trim()) out.push(Number(c));
    } catch {
      /* task gone */
    }
  }
  return out;
}

/** The process tree under `root`, breadth first, root included (while it exists). */
export function descendants(root: number): number[] {
  const seen = new Set<number>();
  const queue = [root];
  while (queue.length && seen.size < 4096) {
    const pid = queue.shift()!;
    if (seen.has(pid) || !fs.existsSync(`/proc/${pid}`)) continue;
    seen.add(pid);
    queue.push(...childrenOf(pid));
  }
  return [...seen];
}

/** Sends `signal` to `pid` (a negative pid: its process group); false when it is gone. */
export function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

import fs from "node:fs";
import { startEngine } from "../test/helpers/engine.js";
import { table, type Bench, type Row } from "./lib.js";
import { warmCreateToFirstExec } from "./warm-pool.js";
import { snapshotFork } from "./storage.js";
const e = await startEngine();
const notes: string[] = [];
const b: Bench = {
  e,
  async create(body = {}) { const r = await e.api("POST", "/sandboxes", { template: "python-3.12", ...body }); if (r.status !== 201) throw new Error(r.text); return r.body.id; },
  async terminate(id) { await e.api("DELETE", `/sandboxes/${id}`); },
  async exec(id, command, extra = {}) { const r = await e.api("POST", `/sandboxes/${id}/exec`, { command, ...extra }); if (r.status !== 200 || r.body.exit_code !== 0) throw new Error(r.text); return r.body.stdout; },
  note: (t) => notes.push(t),
};
const rows: Row[] = [];
try {
  const which = process.argv[2] ?? "warm,snap";
  if (which.includes("warm")) rows.push(...(await warmCreateToFirstExec(b)));
  if (which.includes("snap")) rows.push(...(await snapshotFork(b)));
} finally { await e.stop(); fs.rmSync(e.dataDir!, { recursive: true, force: true }); }
console.log(table(rows)); for (const n of notes) console.log("- " + n);
console.log("load", (await import("node:os")).loadavg());

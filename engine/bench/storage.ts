import { pct, type Bench, type Row } from "./lib.js";

/**
 * 7. Named snapshot and fork of a sandbox holding a 50 MB workspace (50e6 bytes: one 48e6-byte
 * random file and 500 files of 4000 bytes). Each repetition takes a snapshot, forks a child from
 * it (POST /sandboxes {snapshot}) and runs `true` in the child, then terminates the child and
 * deletes the snapshot, so at most one named snapshot is held (the plan caps them).
 */

const REPS = 20;
const BLOB = 48_000_000;
const FILES = 500;
const FILE_BYTES = 4000;

export async function snapshotFork(b: Bench): Promise<Row[]> {
  const source = await b.create();
  await b.exec(
    source,
    `head -c ${BLOB} /dev/urandom > /workspace/blob && mkdir /workspace/src && cd /workspace/src && for i in $(seq 1 ${FILES}); do head -c ${FILE_BYTES} /dev/urandom > f$i; done`,
    { timeout_seconds: 120 },
  );
  const snapshot: number[] = [];
  const frozen: number[] = [];
  const forkCreate: number[] = [];
  const forkExec: number[] = [];
  let sizeMb = 0;
  const held = new Set<string>();
  try {
    for (let i = -1; i < REPS; i++) {
      let t0 = performance.now();
      const snap = await b.e.api("POST", `/sandboxes/${source}/snapshots`, { name: `bench-50mb-${i + 1}` });
      const ts = performance.now() - t0;
      if (snap.status !== 201) throw new Error(`snapshot: ${snap.status} ${snap.text}`);
      held.add(snap.body.id);
      sizeMb = snap.body.size_mb;
      t0 = performance.now();
      const child = await b.create({ snapshot: snap.body.id });
      const t1 = performance.now();
      await b.exec(child, "true");
      const t2 = performance.now();
      if (i === -1) {
        const seen = await b.exec(child, `stat -c %s /workspace/blob && ls /workspace/src | wc -l`);
        if (seen !== `${BLOB}\n${FILES}\n`) throw new Error(`the fork's workspace holds ${JSON.stringify(seen)}`);
      }
      await b.terminate(child);
      await deleteSnapshot(b, snap.body.id);
      held.delete(snap.body.id);
      if (i < 0) continue; // warm-up
      snapshot.push(ts);
      if (typeof snap.body.frozen_ms === "number") frozen.push(snap.body.frozen_ms);
      forkCreate.push(t1 - t0);
      forkExec.push(t2 - t0);
    }
  } finally {
    for (const id of held) await deleteSnapshot(b, id).catch(() => undefined);
  }
  await b.terminate(source);
  b.note(
    `Snapshot/fork: workspace of ${BLOB / 1e6} MB random + ${FILES} × ${FILE_BYTES} B files (${(BLOB + FILES * FILE_BYTES) / 1e6} MB; snapshot size_mb ${sizeMb}, MiB rounded up); ` +
      `${REPS} repetitions after 1 warm-up, each snapshot deleted before the next. ` +
      `The snapshot request = freeze, copy into a tmpfs staging area, thaw, copy that to disk, \`du\`; the source is frozen only for the first copy (frozen_ms): ` +
      `median ${frozen.length ? pct(frozen, 50) : "—"} ms, max ${frozen.length ? Math.max(...frozen) : "—"} ms. A fork is timed from POST /sandboxes {snapshot} on.`,
  );
  const cp = "engine-notes §6: `cp -a` 54 MB on ext4, median";
  const fork = "engine-notes §6: fork ~100 ms per 50 MB";
  return [
    {
      metric: `snapshot 50 MB workspace (POST /snapshots → 201), median (N=${REPS})`,
      ours: pct(snapshot, 50),
      unit: "ms",
      ref: 111,
      source: cp,
    },
    { metric: "snapshot 50 MB, p95", ours: pct(snapshot, 95), unit: "ms", ref: 111, source: cp },
    {
      metric: "fork: create from the snapshot (201 running), median",
      ours: pct(forkCreate, 50),
      unit: "ms",
      ref: 100,
      source: fork,
    },
    { metric: "fork: create alone, p95", ours: pct(forkCreate, 95), unit: "ms", ref: 100, source: fork },
    { metric: "fork: create→first exec `true`, median", ours: pct(forkExec, 50), unit: "ms", ref: 100, source: fork },
    { metric: "fork: create→first exec `true`, p95", ours: pct(forkExec, 95), unit: "ms", ref: 100, source: fork },
  ];
}

async function deleteSnapshot(b: Bench, id: string): Promise<void> {
  const r = await b.e.api("DELETE", `/snapshots/${id}`);
  if (r.status !== 204) throw new Error(`delete snapshot: ${r.status} ${r.text}`);
}

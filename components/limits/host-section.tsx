import type { ReactNode } from "react";
import type { HostCapacity, Isolation } from "../../lib/orkestr/schemas/limits";
import { Badge } from "../ui/badge";
import { GaugeCard } from "./gauge-card";
import { formatMebibytes } from "../../lib/format";
import { formatCount, gaugeState, type Gauge } from "./limits-model";

const n = (v: number | null | undefined): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const mb = (v: number | null | undefined) => formatMebibytes(n(v));
const count = (v: number | null | undefined) => (n(v) === null ? "—" : formatCount(n(v)!));

/** The machine's RAM for sandboxes as a gauge: every account's live, paused and pooled sandboxes and builds count. */
function hostRamGauge(h: HostCapacity): Gauge {
  const used = n(h.memory_committed_mb);
  const cap = n(h.memory_for_sandboxes_mb);
  return {
    id: "host-ram",
    label: "This machine's RAM for sandboxes",
    used,
    cap,
    usedText: mb(used),
    capText: mb(cap),
    state: gaugeState(used, cap),
    atCap:
      "A create or resume the machine cannot hold answers 503 fleet_full with Retry-After: the machine, not your plan. Warm-pool members give way first.",
    remedy:
      "Terminate or pause sandboxes (paused ones keep their memory here), or run the engine on a machine with more RAM.",
    link: null,
    note: null,
  };
}

function Row({ term, children, testId }: { term: string; children: ReactNode; testId?: string }) {
  return (
    <div className="flex flex-col gap-0.5 sm:flex-row sm:gap-4">
      <dt className="shrink-0 text-muted-foreground sm:w-52">{term}</dt>
      <dd className="tabular-nums" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

/**
 * The local engine's host clamp: the one limit every account of this engine shares. Plans count
 * per account; this counts what the machine itself can hold (RAM, pids, disk) after its reserves.
 */
export function HostClamp({ host }: { host: HostCapacity }) {
  const overrides = host.test_overrides ?? [];
  return (
    <div className="flex flex-col gap-4">
      <GaugeCard gauge={hostRamGauge(host)} />
      <dl className="flex flex-col gap-2 text-sm" data-testid="host-clamp">
        <Row term="RAM" testId="host-memory">
          {mb(host.memory_total_mb)} in total, {mb(host.memory_reserved_mb)} kept for the host
        </Row>
        <Row term="Held by sandboxes" testId="host-held">
          {mb(host.memory_paused_mb)} paused, {mb(host.memory_pooled_mb)} in the warm pool (
          {count(host.pooled_sandboxes)} sandboxes), {mb(host.memory_builds_mb)} for template builds
        </Row>
        <Row term="Free for one more sandbox" testId="host-memory-free">
          {mb(host.memory_free_mb)}
        </Row>
        <Row term="Processes (pids)" testId="host-pids">
          {count(host.pids_free)} free of {count(host.pids_limit)} ({count(host.pids_reserved)} kept,{" "}
          {count(host.pids_used_by_host)} used by the host, {count(host.pids_committed)} held by sandboxes)
        </Row>
        <Row term="Disk for volumes and templates" testId="host-disk">
          {mb(host.disk_available_mb)} available ({mb(host.disk_free_mb)} free of {mb(host.disk_total_mb)},{" "}
          {mb(host.disk_reserved_mb)} kept free, {mb(host.disk_committed_mb)} promised to volumes and builds)
        </Row>
      </dl>
      {overrides.length ? (
        <p className="text-xs text-muted-foreground" data-testid="host-overrides">
          Set by test knobs, not measured: {overrides.join(", ")}.
        </p>
      ) : null}
    </div>
  );
}

/** One labelled line of /proc paths ("Read-only: /proc/sys, /proc/irq"), or nothing when there are none. */
function PathList({ label, paths }: { label: string; paths: string[] | null | undefined }) {
  if (!paths?.length) return null;
  return (
    <span className="block">
      {label}:{" "}
      {paths.map((p, i) => (
        <span key={p}>
          {i ? ", " : null}
          <code className="font-mono break-all">{p}</code>
        </span>
      ))}
    </span>
  );
}

/** The local engine's isolation report: what this machine enforces for every sandbox, and what is weaker. */
export function IsolationReport({ isolation }: { isolation: Isolation }) {
  const enforced = isolation.enforced ?? [];
  const degraded = isolation.degraded ?? [];
  const seccomp = isolation.seccomp;
  return (
    <div className="flex flex-col gap-4 text-sm" data-testid="isolation-report">
      <dl className="flex flex-col gap-2">
        <Row term="Mode" testId="isolation-mode">
          <code className="font-mono">{isolation.mode ?? "—"}</code>
        </Row>
        {isolation.kernel ? (
          <Row term="Kernel">
            <code className="font-mono">{isolation.kernel}</code>
          </Row>
        ) : null}
        {seccomp ? (
          <Row term="Syscall filter (seccomp)" testId="isolation-seccomp">
            {seccomp.enforced ? (
              <Badge variant="success">Enforced</Badge>
            ) : (
              <span className="flex flex-wrap items-center gap-2">
                <Badge variant="warning">Not enforced</Badge>
                {seccomp.reason ? <span>{seccomp.reason}</span> : null}
              </span>
            )}
          </Row>
        ) : null}
        {isolation.proc ? (
          <Row term="Kernel state (/proc)" testId="isolation-proc">
            <PathList label="Read-only" paths={isolation.proc.read_only} />
            <PathList label="Masked" paths={isolation.proc.masked} />
            {isolation.sys ? <span className="block">/sys: {isolation.sys}</span> : null}
          </Row>
        ) : null}
        {isolation.builds !== undefined ? (
          <Row term="Template builds run as" testId="isolation-builds">
            {isolation.builds ? (
              <span>
                {isolation.builds.user === "userns-root"
                  ? "root of their own user namespace only"
                  : "an unprivileged host uid"}
                {isolation.builds.host_uids ? (
                  <>
                    {" "}
                    (host uids <code className="font-mono">{isolation.builds.host_uids}</code>, never 0)
                  </>
                ) : null}
              </span>
            ) : (
              <span className="text-muted-foreground">Custom templates are unavailable here (see Degraded).</span>
            )}
          </Row>
        ) : null}
      </dl>
      <div className="grid gap-4 lg:grid-cols-2">
        <div>
          <h3 className="mb-2 text-sm font-medium">Enforced ({enforced.length})</h3>
          {enforced.length ? (
            <ul className="flex list-disc flex-col gap-1 pl-5" aria-label="Enforced" data-testid="isolation-enforced">
              {enforced.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : (
            <p className="text-muted-foreground">Nothing reported.</p>
          )}
        </div>
        <div>
          <h3 className="mb-2 text-sm font-medium">Degraded on this machine ({degraded.length})</h3>
          {degraded.length ? (
            <ul
              className="flex list-disc flex-col gap-1 rounded-md border border-warning/60 bg-warning/15 py-2 pr-3 pl-7"
              aria-label="Degraded on this machine"
              data-testid="isolation-degraded"
            >
              {degraded.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : (
            <p className="text-muted-foreground">Nothing: every protection the engine knows is in place.</p>
          )}
        </div>
      </div>
    </div>
  );
}

"use client";

import { useCallback, useLayoutEffect, useRef, useState } from "react";
import { cn } from "../../../lib/utils";
import { formatDuration } from "../../../lib/format";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import type { BuildLogModel, LogEntry, StepSection } from "./log-model";
import type { FollowState } from "./use-build-log";

/** How close to the bottom (px) still counts as "at the latest line". */
const BOTTOM_SLACK = 24;

/**
 * The build log: the engine's own lines, then a section per step (its command, how it ended),
 * stdout and stderr told apart by a gutter mark and a tint, ANSI colours kept (escaped HTML from
 * ./ansi.ts). It follows the newest line until the reader scrolls up; "Jump to latest" (or scrolling
 * back down) follows again. Steps the build has not reached are listed as waiting, or as not run once
 * it ended.
 */
export function BuildLogView({
  model,
  version,
  state,
  steps,
}: {
  model: BuildLogModel;
  version: number;
  state: FollowState;
  /** The template's steps, for the ones the log has not reached. */
  steps: readonly string[];
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const [paused, setPausedState] = useState(false);
  /** Lines in the log when following stopped: "Jump to latest" counts the ones since. */
  const [linesAtPause, setLinesAtPause] = useState(0);
  const setPaused = (next: boolean) => {
    if (next && !paused) setLinesAtPause(model.lines);
    setPausedState(next);
  };

  const toBottom = useCallback(() => {
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, []);

  useLayoutEffect(() => {
    if (paused) return;
    toBottom();
  }, [version, paused, toBottom]);

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK;
    setPaused(!atBottom);
  };

  const seen = new Set(model.sections.filter((s) => s.kind === "step").map((s) => (s as StepSection).index));
  const unseen = steps.map((command, index) => ({ command, index })).filter((s) => !seen.has(s.index));
  const newLines = paused ? model.lines - linesAtPause : 0;

  return (
    <div className="flex flex-col gap-2">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <FollowStatus state={state} />
        <div className="flex items-center gap-2">
          {paused ? (
            <Button
              size="sm"
              variant="outline"
              onClick={() => {
                setPaused(false);
                toBottom();
              }}
            >
              Jump to latest{newLines > 0 ? ` (${newLines} new)` : ""}
            </Button>
          ) : state.kind === "live" || state.kind === "connecting" ? (
            <Button size="sm" variant="ghost" onClick={() => setPaused(true)}>
              Pause scrolling
            </Button>
          ) : null}
        </div>
      </div>
      <div
        ref={scroller}
        onScroll={onScroll}
        tabIndex={0}
        role="region"
        aria-label="Build log"
        aria-busy={state.kind === "connecting" ? true : undefined}
        data-testid="build-log"
        data-following={paused ? "false" : "true"}
        className="max-h-[32rem] min-h-32 overflow-auto rounded-md border bg-muted/40 py-2 font-mono text-xs leading-5"
      >
        {model.sections.map((section, i) =>
          section.kind === "engine" ? (
            <div key={`e${i}`} className="px-3">
              {section.entries.map((e) => (
                <Line key={e.seq} entry={e} />
              ))}
            </div>
          ) : (
            <StepBlock key={`s${section.index}`} section={section} model={model} total={steps.length} />
          ),
        )}
        {unseen.map((s) => (
          <div
            key={`u${s.index}`}
            className="mt-2 flex items-center gap-2 px-3 text-muted-foreground"
            data-testid="step-waiting"
          >
            <span>
              step {s.index + 1}
              {steps.length ? `/${steps.length}` : ""}: {s.command}
            </span>
            <Badge variant="neutral">{model.final ? "not run" : "waiting"}</Badge>
          </div>
        ))}
        {model.sections.length === 0 && state.kind !== "error" ? (
          <p className="px-3 text-muted-foreground">
            {state.kind === "done" ? "This build logged nothing." : "Waiting for the build's first line…"}
          </p>
        ) : null}
      </div>
    </div>
  );
}

function FollowStatus({ state }: { state: FollowState }) {
  const text =
    state.kind === "connecting"
      ? "Connecting to the build log…"
      : state.kind === "live"
        ? "Live: new lines appear as the build prints them."
        : state.kind === "reconnecting"
          ? `The log stream broke off (${state.reason}); reconnecting in ${Math.round(state.inMs / 1000)} s from the last line received.`
          : state.kind === "done"
            ? "The build has ended; this is its whole log."
            : `The log cannot be followed: ${state.reason}`;
  return (
    <p
      role="status"
      className={cn("text-xs text-muted-foreground", state.kind === "error" && "text-destructive")}
      data-testid="log-status"
    >
      {state.kind === "live" ? (
        <span
          aria-hidden="true"
          className="mr-1.5 inline-block size-1.5 animate-pulse rounded-full bg-success align-middle motion-reduce:animate-none"
        />
      ) : null}
      {text}
    </p>
  );
}

function StepBlock({ section, model, total }: { section: StepSection; model: BuildLogModel; total: number }) {
  const state = model.stepState(section.index);
  const failure = state === "failed" ? model.failure() : null;
  const code = section.exit?.code ?? (failure?.stepIndex === section.index ? failure.exitCode : null);
  return (
    <section
      id={`build-step-${section.index + 1}`}
      aria-label={`Step ${section.index + 1}`}
      data-testid="build-step"
      data-state={state}
      className={cn(
        "mt-2 border-l-2 border-transparent",
        state === "failed" && "border-destructive bg-destructive/10",
        state === "running" && "border-primary",
      )}
    >
      <h3 className="flex flex-wrap items-center gap-2 px-3 py-0.5 font-semibold">
        <span>
          step {section.index + 1}
          {total ? `/${total}` : ""}
          {section.command !== null ? ": " : ""}
          <span className="font-normal">{section.command}</span>
        </span>
        <StepBadge
          state={state}
          code={code}
          durationMs={section.exit?.durationMs ?? null}
          reason={section.exit?.reason ?? null}
        />
      </h3>
      <div className="px-3">
        {section.entries.map((e) => (
          <Line key={e.seq} entry={e} />
        ))}
      </div>
    </section>
  );
}

function StepBadge({
  state,
  code,
  durationMs,
  reason,
}: {
  state: ReturnType<BuildLogModel["stepState"]>;
  code: number | null;
  durationMs: number | null;
  reason: string | null;
}) {
  const took = durationMs === null ? "" : ` in ${durationMs < 1000 ? `${durationMs} ms` : formatDuration(durationMs)}`;
  if (state === "ok") return <Badge variant="success">exit 0{took}</Badge>;
  if (state === "failed")
    return (
      <Badge variant="destructive" data-testid="step-exit">
        {code === null ? "failed" : `exit code ${code}`}
        {took}
        {reason ? ` (${reason})` : ""}
      </Badge>
    );
  if (state === "running") return <Badge variant="pending">running…</Badge>;
  if (state === "stopped") return <Badge variant="warning">stopped</Badge>;
  return <Badge variant="neutral">not run</Badge>;
}

function Line({ entry }: { entry: LogEntry }) {
  const err = entry.stream === "stderr";
  const system = entry.stream === "system";
  return (
    <div
      data-stream={entry.stream}
      className={cn(
        "grid grid-cols-[2.25rem_1fr] gap-2 whitespace-pre-wrap break-all",
        err && "bg-warning/10",
        system && "text-muted-foreground",
      )}
    >
      <span
        className={cn(
          "select-none text-right text-[10px] uppercase leading-5",
          err ? "font-semibold text-foreground" : "text-muted-foreground",
        )}
      >
        {err ? "err" : system ? "baton" : "out"}
      </span>
      {/* Escaped by ./ansi.ts: the build's text cannot add markup. */}
      <span dangerouslySetInnerHTML={{ __html: entry.html || "\u200b" }} />
    </div>
  );
}

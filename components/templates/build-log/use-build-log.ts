"use client";

import { useEffect, useRef, useState } from "react";
import { OrkestrAbortError, OrkestrError, errorText } from "../../../lib/orkestr/errors";
import { followBuildLog } from "../../../lib/queries/template-log";
import { BuildLogModel } from "./log-model";

/** How the follow stands: streaming, waiting to reconnect (with why), finished, or given up. */
export type FollowState =
  | { kind: "connecting" }
  | { kind: "live" }
  | { kind: "reconnecting"; reason: string; inMs: number }
  | { kind: "done" }
  | { kind: "error"; reason: string };

const RETRY_MS = [1_000, 2_000, 5_000, 10_000];

/**
 * A template's build log, followed live: lines are taken into a BuildLogModel as they arrive and
 * drawn at most once a frame (a build can print thousands of lines a second). A dropped connection is
 * resumed from the line after the last one seen (the engine's cursor), after 1, 2, 5, then every 10 s;
 * a template that no longer exists (404) ends the follow. `onFinal` runs once, when the build ends.
 */
export function useBuildLog(
  id: string,
  onFinal?: () => void,
): { model: BuildLogModel; version: number; state: FollowState } {
  const [model] = useState(() => new BuildLogModel());
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<FollowState>({ kind: "connecting" });
  const onFinalRef = useRef(onFinal);
  useEffect(() => {
    onFinalRef.current = onFinal;
  });

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let frame = 0;
    const draw = () => {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        setVersion((v) => v + 1);
      });
    };
    void (async () => {
      for (let attempt = 0; !signal.aborted; attempt++) {
        let live = false;
        try {
          for await (const event of followBuildLog(id, { cursor: model.lastSeq + 1, signal })) {
            if (!live) {
              live = true;
              attempt = 0;
              setState({ kind: "live" });
            }
            if (event.type === "line") model.push(event.line);
            else {
              model.finish(event.final);
              draw();
              setState({ kind: "done" });
              onFinalRef.current?.();
              return;
            }
            draw();
          }
          if (signal.aborted) return;
          // The stream ended without its final frame: the connection was cut; resume.
          throw new Error("The log stream ended before the build did.");
        } catch (e) {
          if (signal.aborted || e instanceof OrkestrAbortError) return;
          if (e instanceof OrkestrError && (e.status === 404 || e.status === 403 || e.status === 401)) {
            setState({ kind: "error", reason: errorText(e) });
            return;
          }
          const inMs = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!;
          setState({ kind: "reconnecting", reason: errorText(e), inMs });
          await new Promise((r) => setTimeout(r, inMs));
        }
      }
    })();
    return () => {
      controller.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [id, model]);

  return { model, version, state };
}

"use client";

import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { cn } from "../../../lib/utils";
import { LineShell } from "./line-shell";
import { PtyConnection, type PtyState } from "./pty-connection";
import { DARK_THEME, isDarkPage, LIGHT_THEME, watchPageTheme } from "./terminal-theme";
import { WriteBatcher } from "./write-batcher";

// One terminal tab: an xterm (fitted to its pane, which the user can also drag taller) driven
// either by a PTY session over the WebSocket relay or by the line-mode shell over streaming exec.
// The tab stays mounted while another one is shown, so nothing is lost when switching.

export type TerminalSpec = { mode: "pty"; ptyId: string } | { mode: "line" };

export type TerminalStatus =
  | { status: "connecting" }
  | { status: "ready" }
  | { status: "running"; command: string }
  | { status: "reconnecting"; detail: string }
  | { status: "offline" }
  | { status: "exited"; exitCode: number | null; signal: string | null }
  | { status: "failed"; detail: string };

const SCROLLBACK_LINES = 10_000;

function fromPty(state: PtyState): TerminalStatus {
  switch (state.status) {
    case "open":
      return { status: "ready" };
    case "reconnecting":
      return { status: "reconnecting", detail: state.detail };
    default:
      return state;
  }
}

export function TerminalView({
  sandboxId,
  spec,
  visible,
  label,
  onStatus,
}: {
  sandboxId: string;
  spec: TerminalSpec;
  visible: boolean;
  label: string;
  onStatus: (status: TerminalStatus) => void;
}) {
  const host = useRef<HTMLDivElement>(null);
  const fitRef = useRef<(() => void) | null>(null);
  const statusRef = useRef(onStatus);
  const [status, setStatus] = useState<TerminalStatus>({ status: "connecting" });
  useEffect(() => {
    statusRef.current = onStatus;
  }, [onStatus]);

  const ptyId = spec.mode === "pty" ? spec.ptyId : null;
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const report = (s: TerminalStatus) => {
      setStatus(s);
      statusRef.current(s);
    };
    const term = new Terminal({
      cursorBlink: true,
      convertEol: ptyId === null, // line mode has no pty to turn \n into \r\n
      scrollback: SCROLLBACK_LINES,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
      fontSize: 13,
      theme: isDarkPage() ? DARK_THEME : LIGHT_THEME,
      allowProposedApi: false,
      // Programs pick their own colours (ls, prompts); xterm nudges any that would be hard to read.
      minimumContrastRatio: 4.5,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    term.textarea?.setAttribute("aria-label", `${label} input`);
    const batcher = new WriteBatcher(term);
    const unwatchTheme = watchPageTheme((dark) => (term.options.theme = dark ? DARK_THEME : LIGHT_THEME));

    const doFit = () => {
      if (!el.isConnected || el.offsetParent === null) return; // hidden tab: fit when shown
      try {
        fit.fit();
      } catch {
        /* not measurable yet */
      }
    };
    let frame = 0;
    const observer = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(doFit);
    });
    observer.observe(el);
    fitRef.current = doFit;
    doFit();

    let dispose: () => void;
    if (ptyId !== null) {
      const conn = new PtyConnection({
        sandboxId,
        ptyId,
        onOutput: (bytes) => batcher.write(bytes),
        onNotice: (text) => batcher.write(`\x1b[90m${text}\x1b[0m`),
        onState: (state) => {
          // Input is blocked unless connected: typing into a dead socket would be lost silently.
          term.options.disableStdin = state.status !== "open";
          if (state.status === "exited") {
            batcher.write(
              `\r\n\x1b[90m[process exited${state.signal ? ` (${state.signal})` : ` with code ${state.exitCode ?? "?"}`}]\x1b[0m\r\n`,
            );
          }
          report(fromPty(state));
        },
        size: () => ({ cols: term.cols, rows: term.rows }),
      });
      const onData = term.onData((d) => conn.send(d));
      const onBinary = term.onBinary((d) => conn.send(d));
      const onResize = term.onResize(({ cols, rows }) => conn.resize(cols, rows));
      conn.connect();
      dispose = () => {
        onData.dispose();
        onBinary.dispose();
        onResize.dispose();
        conn.dispose();
      };
    } else {
      const shell = new LineShell(sandboxId, { write: (text) => batcher.write(text), clear: () => term.clear() }, (s) =>
        report(
          s.status === "running"
            ? { status: "running", command: s.command }
            : navigator.onLine
              ? { status: "ready" }
              : { status: "offline" },
        ),
      );
      const onData = term.onData((d) => {
        if (!navigator.onLine && !d.includes("\x03")) return; // offline: input is blocked
        shell.input(d);
      });
      const online = () => report(navigator.onLine ? { status: "ready" } : { status: "offline" });
      window.addEventListener("online", online);
      window.addEventListener("offline", online);
      shell.start();
      report(navigator.onLine ? { status: "ready" } : { status: "offline" });
      dispose = () => {
        onData.dispose();
        window.removeEventListener("online", online);
        window.removeEventListener("offline", online);
        shell.dispose();
      };
    }

    return () => {
      observer.disconnect();
      cancelAnimationFrame(frame);
      unwatchTheme();
      dispose();
      batcher.dispose();
      term.dispose();
      fitRef.current = null;
    };
  }, [sandboxId, ptyId, label]);

  // A tab that becomes visible is measured again (hidden tabs cannot be).
  useEffect(() => {
    if (visible) requestAnimationFrame(() => fitRef.current?.());
  }, [visible]);

  const blocked = status.status === "reconnecting" || status.status === "offline" || status.status === "connecting";
  return (
    <div className="relative">
      <div
        ref={host}
        data-testid="terminal"
        data-status={status.status}
        className={cn(
          "h-[60vh] min-h-64 resize-y overflow-hidden rounded-md border bg-white p-2 dark:bg-[#0d1117]",
          blocked && "opacity-70",
        )}
      />
      {blocked ? (
        <div className="pointer-events-none absolute inset-x-0 top-3 flex justify-center" aria-hidden="true">
          <span className="rounded-full border bg-background/95 px-3 py-1 text-xs font-medium shadow-sm">
            {status.status === "connecting"
              ? "Connecting…"
              : status.status === "offline"
                ? "Offline: input paused"
                : "Reconnecting… input paused"}
          </span>
        </div>
      ) : null}
    </div>
  );
}

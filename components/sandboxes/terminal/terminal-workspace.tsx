"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useRef, useState } from "react";
import { toast } from "../../ui/toast";
import { errorText, OrkestrError } from "../../../lib/orkestr/errors";
import { sandboxQueries } from "../../../lib/queries/sandboxes";
import { cn } from "../../../lib/utils";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Dialog, DialogActions } from "../../ui/dialog";
import { Skeleton } from "../../ui/skeleton";
import { hasPty, terminalApi, terminalKeys, terminalQueries } from "../../../lib/queries/terminal";
import { TerminalView, type TerminalSpec, type TerminalStatus } from "./terminal-view";

// The sandbox's terminals: nothing runs until "Open terminal" is pressed (an open page alone keeps
// no sandbox awake), then one tab per terminal. Interactive PTY sessions when the upstream
// advertises the PTY extension, else (or when asked, ?mode=line) line mode over streaming exec.

type Mode = "pty" | "line";

interface Tab {
  key: string;
  title: string;
  spec: TerminalSpec;
  status: TerminalStatus;
}

const MAX_TABS = 8;

function statusLabel(s: TerminalStatus): { text: string; tone: "ok" | "busy" | "warn" | "off" } {
  switch (s.status) {
    case "connecting":
      return { text: "connecting", tone: "busy" };
    case "ready":
      return { text: "connected", tone: "ok" };
    case "running":
      return { text: "running", tone: "busy" };
    case "reconnecting":
      return { text: "reconnecting", tone: "warn" };
    case "offline":
      return { text: "offline", tone: "warn" };
    case "exited":
      return { text: "exited", tone: "off" };
    case "failed":
      return { text: "closed", tone: "off" };
  }
}

const TONE = { ok: "bg-success", busy: "bg-primary", warn: "bg-warning", off: "bg-muted-foreground" } as const;

export function TerminalWorkspace({ sandboxId, forceLine }: { sandboxId: string; forceLine: boolean }) {
  const queryClient = useQueryClient();
  const limits = useQuery(sandboxQueries.limits());
  const ptyAvailable = hasPty(limits.data);
  const [chosenMode, setChosenMode] = useState<Mode | null>(forceLine ? "line" : null);
  const mode: Mode = chosenMode ?? (ptyAvailable ? "pty" : "line");
  const sessions = useQuery({
    ...terminalQueries.sessions(sandboxId),
    enabled: ptyAvailable,
    retry: false,
  });
  const [tabs, setTabs] = useState<Tab[]>([]);
  const [active, setActive] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const [openError, setOpenError] = useState<string | null>(null);
  const [closing, setClosing] = useState<Tab | null>(null);
  const counter = useRef(0);
  const tabRefs = useRef(new Map<string, HTMLButtonElement>());

  const addTab = useCallback((spec: TerminalSpec) => {
    counter.current += 1;
    const key = `t${counter.current}`;
    const title = `${spec.mode === "pty" ? "Terminal" : "Line"} ${counter.current}`;
    setTabs((prev) => [...prev, { key, title, spec, status: { status: "connecting" } }]);
    setActive(key);
  }, []);

  const open = async () => {
    setOpenError(null);
    if (mode === "line") return addTab({ mode: "line" });
    setOpening(true);
    try {
      // The first size is a guess; the terminal sends its fitted size as soon as it connects.
      const session = await terminalApi.open(sandboxId, { cols: 100, rows: 30 });
      addTab({ mode: "pty", ptyId: session.id });
      void queryClient.invalidateQueries({ queryKey: terminalKeys.sessions(sandboxId) });
    } catch (err) {
      setOpenError(errorText(err));
    } finally {
      setOpening(false);
    }
  };

  const setStatus = useCallback((key: string, status: TerminalStatus) => {
    setTabs((prev) => prev.map((t) => (t.key === key ? { ...t, status } : t)));
  }, []);

  const removeTab = (tab: Tab) => {
    setTabs((prev) => {
      const rest = prev.filter((t) => t.key !== tab.key);
      if (active === tab.key) setActive(rest.at(-1)?.key ?? null);
      return rest;
    });
  };

  const closeTab = async (tab: Tab) => {
    setClosing(null);
    removeTab(tab);
    if (tab.spec.mode !== "pty" || tab.status.status === "exited" || tab.status.status === "failed") return;
    try {
      await terminalApi.close(sandboxId, tab.spec.ptyId);
    } catch (err) {
      if (!(err instanceof OrkestrError && err.status === 404))
        toast.error(`Could not close the terminal: ${errorText(err)}`);
    }
    void queryClient.invalidateQueries({ queryKey: terminalKeys.sessions(sandboxId) });
  };

  const askClose = (tab: Tab) => {
    const live = tab.status.status !== "exited" && tab.status.status !== "failed";
    if (live && (tab.spec.mode === "pty" || tab.status.status === "running")) setClosing(tab);
    else void closeTab(tab);
  };

  // Arrow keys move between tabs (WAI-ARIA tabs pattern).
  const onTabKey = (e: React.KeyboardEvent, index: number) => {
    if (e.key === "Delete" && tabs[index]) return askClose(tabs[index]);
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    e.preventDefault();
    const next = tabs[(index + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    if (next) {
      setActive(next.key);
      tabRefs.current.get(next.key)?.focus();
    }
  };

  const attachedIds = new Set(tabs.flatMap((t) => (t.spec.mode === "pty" ? [t.spec.ptyId] : [])));
  const detached = (sessions.data ?? []).filter((s) => s.status === "running" && !attachedIds.has(s.id));

  if (limits.isPending) {
    return <Skeleton className="h-[60vh] w-full" />;
  }

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center gap-3">
        <Button onClick={() => void open()} disabled={opening || tabs.length >= MAX_TABS}>
          {opening ? "Opening…" : tabs.length ? "New terminal" : "Open terminal"}
        </Button>
        {ptyAvailable ? (
          <fieldset className="flex items-center gap-3 text-sm">
            <legend className="sr-only">Terminal mode</legend>
            {(["pty", "line"] as const).map((m) => (
              <label key={m} className="flex cursor-pointer items-center gap-1.5">
                <input
                  type="radio"
                  name="terminal-mode"
                  value={m}
                  checked={mode === m}
                  onChange={() => setChosenMode(m)}
                  className="accent-primary"
                />
                {m === "pty" ? "Interactive (PTY)" : "Line mode (exec)"}
              </label>
            ))}
          </fieldset>
        ) : (
          <p className="text-sm text-muted-foreground">
            {limits.isError
              ? `Could not read the API's capabilities (${errorText(limits.error)}); using line mode.`
              : "This API has no interactive terminals: line mode runs each command through streaming exec."}
          </p>
        )}
        {tabs.length >= MAX_TABS ? (
          <p className="text-sm text-muted-foreground">At most {MAX_TABS} terminals at once: close one first.</p>
        ) : null}
      </div>

      {openError ? (
        <Alert variant="destructive">
          <AlertTitle>Could not open a terminal</AlertTitle>
          <AlertDescription>{openError}</AlertDescription>
        </Alert>
      ) : null}

      {detached.length ? (
        <div
          className="flex flex-wrap items-center gap-2 text-sm"
          role="group"
          aria-label="Terminals still running in this sandbox"
        >
          <span className="text-muted-foreground">Still running in this sandbox:</span>
          {detached.map((s) => (
            <Button key={s.id} size="sm" variant="outline" onClick={() => addTab({ mode: "pty", ptyId: s.id })}>
              Reattach {s.command && !/^\/bin\/(ba)?sh( -l)?$/.test(s.command) ? s.command.slice(0, 30) : "shell"}
              <span className="font-mono text-xs text-muted-foreground">…{s.id.slice(-6)}</span>
            </Button>
          ))}
        </div>
      ) : null}

      {tabs.length === 0 ? (
        <div className="flex min-h-64 flex-col items-center justify-center gap-2 rounded-md border border-dashed p-8 text-center">
          <p className="font-medium">No terminal open</p>
          <p className="max-w-md text-sm text-muted-foreground">
            A terminal runs a shell inside the sandbox. It starts only when you open one, so leaving this page open
            keeps nothing awake.
            {mode === "pty"
              ? " Interactive terminals keep running for 10 minutes after you leave, so you can reattach."
              : ""}
          </p>
        </div>
      ) : (
        <div className="flex flex-col gap-2">
          <div role="tablist" aria-label="Terminals" className="flex flex-wrap gap-1 border-b">
            {tabs.map((tab, i) => {
              const s = statusLabel(tab.status);
              const selected = tab.key === active;
              return (
                <button
                  key={tab.key}
                  ref={(el) => void (el ? tabRefs.current.set(tab.key, el) : tabRefs.current.delete(tab.key))}
                  role="tab"
                  id={`tab-${tab.key}`}
                  aria-selected={selected}
                  aria-controls={`panel-${tab.key}`}
                  tabIndex={selected ? 0 : -1}
                  onClick={() => setActive(tab.key)}
                  onKeyDown={(e) => onTabKey(e, i)}
                  className={cn(
                    "-mb-px flex items-center gap-2 rounded-t-md border px-3 py-1.5 text-sm",
                    selected
                      ? "border-b-background bg-background font-medium"
                      : "border-transparent text-muted-foreground hover:text-foreground",
                  )}
                >
                  <span className={cn("size-2 rounded-full", TONE[s.tone])} aria-hidden="true" />
                  {tab.title}
                  <span className="sr-only">({s.text})</span>
                </button>
              );
            })}
          </div>
          {tabs.map((tab) => (
            <div
              key={tab.key}
              role="tabpanel"
              id={`panel-${tab.key}`}
              aria-labelledby={`tab-${tab.key}`}
              hidden={tab.key !== active}
            >
              <TerminalView
                sandboxId={sandboxId}
                spec={tab.spec}
                visible={tab.key === active}
                label={tab.title}
                onStatus={(s) => setStatus(tab.key, s)}
              />
              <TerminalStatusLine tab={tab} onReopen={() => void open()} onClose={() => askClose(tab)} />
            </div>
          ))}
        </div>
      )}

      <Dialog
        open={closing !== null}
        onOpenChange={(o) => (o ? undefined : setClosing(null))}
        title={`Close ${closing?.title ?? "terminal"}?`}
        description="The shell and everything still running in it will be stopped."
      >
        <DialogActions>
          <Button variant="destructive" onClick={() => closing && void closeTab(closing)}>
            Close terminal
          </Button>
        </DialogActions>
      </Dialog>
    </div>
  );
}

function TerminalStatusLine({ tab, onReopen, onClose }: { tab: Tab; onReopen: () => void; onClose: () => void }) {
  const s = tab.status;
  let text: string;
  switch (s.status) {
    case "connecting":
      text = "Connecting…";
      break;
    case "ready":
      text = tab.spec.mode === "pty" ? "Connected. Ctrl-C, vim and top work as in any terminal." : "Ready.";
      break;
    case "running":
      text = `Running ${s.command.length > 60 ? `${s.command.slice(0, 60)}…` : s.command}. Ctrl-C stops it.`;
      break;
    case "reconnecting":
      text = `${s.detail} Reconnecting; input is paused until then.`;
      break;
    case "offline":
      text = "You are offline; input is paused.";
      break;
    case "exited":
      text = `The session ended${s.signal ? ` (${s.signal})` : s.exitCode !== null ? ` with exit code ${s.exitCode}` : ""}.`;
      break;
    case "failed":
      text = s.detail;
      break;
  }
  const ended = s.status === "exited" || s.status === "failed";
  return (
    <div className="mt-2 flex items-center justify-between gap-3 text-sm text-muted-foreground">
      <p role="status" aria-live="polite" data-testid="terminal-status">
        {text}
      </p>
      <div className="flex shrink-0 gap-2">
        {ended ? (
          <Button size="sm" variant="outline" onClick={onReopen}>
            Open a new terminal
          </Button>
        ) : null}
        <Button size="sm" variant="ghost" onClick={onClose} aria-label={`Close ${tab.title}`}>
          Close
        </Button>
      </div>
    </div>
  );
}

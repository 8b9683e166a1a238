"use client";

import dynamic from "next/dynamic";
import { useEffect, useState, useSyncExternalStore } from "react";
import { Dialog } from "../ui/dialog";
import { isTyping, shortcutList } from "./shortcuts";

// The palette's code (cmdk and the sandbox actions) loads on first use: only this small listener is
// part of every page's first load.
const CommandPalette = dynamic(() => import("./command-palette").then((m) => m.CommandPalette), { ssr: false });

const noSubscribe = () => () => {};
const isMac = () => /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/** Ctrl/Cmd-K opens the command palette, `?` the shortcut list; mounted once in the console layout. */
export function CommandLauncher() {
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const mac = useSyncExternalStore(noSubscribe, isMac, () => false);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.metaKey || e.ctrlKey) && !e.altKey && e.key.toLowerCase() === "k") {
        e.preventDefault();
        setLoaded(true);
        setPaletteOpen((open) => !open);
        return;
      }
      if (e.key === "?" && !e.metaKey && !e.ctrlKey && !e.altKey && !isTyping(e.target)) {
        e.preventDefault();
        setHelpOpen(true);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  return (
    <>
      {loaded ? (
        <CommandPalette
          open={paletteOpen}
          onOpenChange={setPaletteOpen}
          onShowShortcuts={() => {
            setPaletteOpen(false);
            setHelpOpen(true);
          }}
        />
      ) : null}
      <Dialog open={helpOpen} onOpenChange={setHelpOpen} title="Keyboard shortcuts">
        <dl className="flex flex-col divide-y text-sm">
          {shortcutList(mac).map((s) => (
            <div key={s.what} className="flex items-start justify-between gap-4 py-2">
              <dt className="flex shrink-0 gap-1">
                {s.keys.map((k) => (
                  <kbd key={k} className="min-w-6 rounded border bg-muted px-1.5 py-0.5 text-center font-mono text-xs">
                    {k}
                  </kbd>
                ))}
              </dt>
              <dd className="text-right text-muted-foreground">{s.what}</dd>
            </div>
          ))}
        </dl>
      </Dialog>
    </>
  );
}

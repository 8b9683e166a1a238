"use client";

import dynamic from "next/dynamic";
import { useEffect, useState } from "react";
import { isTyping } from "./shortcuts";
import type { TeamOption } from "../teams/team-switcher";

// The palette's code (cmdk and the sandbox actions) and the `?` shortcut list load on first use:
// only this small listener is part of every page's first load. Each stays mounted once loaded, so
// its dialog closes (and hands the focus back) the way it opened.
const CommandPalette = dynamic(() => import("./command-palette").then((m) => m.CommandPalette), { ssr: false });
const ShortcutHelp = dynamic(() => import("./shortcut-help").then((m) => m.ShortcutHelp), { ssr: false });

/** Ctrl/Cmd-K opens the command palette, `?` the shortcut list; mounted once in the console layout. */
export function CommandLauncher({
  teams = [],
  activeSlug = null,
}: {
  teams?: TeamOption[];
  activeSlug?: string | null;
}) {
  const [paletteOpen, setPaletteOpen] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const [helpOpen, setHelpOpen] = useState(false);
  const [helpLoaded, setHelpLoaded] = useState(false);

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
        setHelpLoaded(true);
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
          teams={teams}
          activeSlug={activeSlug}
          onShowShortcuts={() => {
            setPaletteOpen(false);
            setHelpLoaded(true);
            setHelpOpen(true);
          }}
        />
      ) : null}
      {helpLoaded ? <ShortcutHelp open={helpOpen} onOpenChange={setHelpOpen} /> : null}
    </>
  );
}

"use client";

import dynamic from "next/dynamic";
import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { cn } from "../../lib/utils";
import { ChevronDownIcon } from "../layout/icons";

/** One of the user's teams, as the console layout hands it down (a DTO). */
export interface TeamOption {
  name: string;
  slug: string;
  role: string;
}

/** ⌘K's "Create team" asks the header's switcher to open its dialog with this event. */
export const CREATE_TEAM_EVENT = "baton:create-team";

// The open menu and the dialog load on first use (the button is in every page's first load);
// pointing at or focusing the button starts the download.
const loadPanel = () => import("./team-switcher-panel").then((m) => m.TeamSwitcherPanel);
const TeamSwitcherPanel = dynamic(loadPanel, { ssr: false });
const CreateTeamDialog = dynamic(() => import("./create-team-dialog").then((m) => m.CreateTeamDialog), {
  ssr: false,
});

/**
 * The header's team switcher: a menu button (ARIA menu button: Enter, Space and the arrow keys open
 * it and move between items, Escape closes it and returns the focus) naming the tab's team, with the
 * user's teams as radio items and "Create team…".
 */
export function TeamSwitcher({ teams, activeSlug }: { teams: TeamOption[]; activeSlug: string | null }) {
  const [open, setOpen] = useState(false);
  const [creating, setCreating] = useState(false);
  const [createWanted, setCreateWanted] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const [focusOnOpen, setFocusOnOpen] = useState<"first" | "last" | "active">("active");
  const menuId = useId();
  const buttonId = useId();
  const active = teams.find((t) => t.slug === activeSlug);

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  }, []);
  const openMenu = (focus: "first" | "last" | "active") => {
    setFocusOnOpen(focus);
    setOpen(true);
  };
  const startCreate = useCallback(() => {
    setCreateWanted(true);
    setCreating(true);
  }, []);

  useEffect(() => {
    window.addEventListener(CREATE_TEAM_EVENT, startCreate);
    return () => window.removeEventListener(CREATE_TEAM_EVENT, startCreate);
  }, [startCreate]);

  function onButtonKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      openMenu(event.key === "ArrowUp" ? "last" : "first");
    }
  }

  return (
    <div ref={rootRef} className="relative min-w-0 shrink">
      <button
        ref={buttonRef}
        id={buttonId}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => (open ? close(false) : openMenu("active"))}
        onKeyDown={onButtonKeyDown}
        onPointerEnter={() => void loadPanel()}
        onFocus={() => void loadPanel()}
        className={cn(
          "inline-flex h-9 max-w-full items-center sm:max-w-48 gap-1.5 rounded-md border px-2.5 text-sm font-medium transition-colors hover:bg-accent hover:text-accent-foreground",
          open && "bg-accent text-accent-foreground",
        )}
      >
        <span className="sr-only">Team: </span>
        <span className="truncate">{active?.name ?? "No team"}</span>
        <ChevronDownIcon aria-hidden="true" className="shrink-0 text-muted-foreground" />
      </button>
      {open ? (
        <TeamSwitcherPanel
          teams={teams}
          activeSlug={activeSlug}
          menuId={menuId}
          buttonId={buttonId}
          rootRef={rootRef}
          focusOnOpen={focusOnOpen}
          close={close}
          startCreate={startCreate}
        />
      ) : null}
      {createWanted ? <CreateTeamDialog open={creating} onOpenChange={setCreating} /> : null}
    </div>
  );
}

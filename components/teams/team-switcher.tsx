"use client";

import dynamic from "next/dynamic";
import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import { switchTeamHref } from "../../lib/team-param";
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

const CreateTeamDialog = dynamic(() => import("./create-team-dialog").then((m) => m.CreateTeamDialog), {
  ssr: false,
});

/**
 * A switch is a navigation to the same page with the new team in the URL (lib/team-param.ts): a full
 * load, so nothing of the old team (cached lists, live streams, the header's connection) is shown
 * in the new one even for a moment, and only this tab changes team.
 */
export function switchTeam(slug: string): void {
  window.location.assign(switchTeamHref(`${window.location.pathname}${window.location.search}`, slug));
}

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
  const menuRef = useRef<HTMLDivElement>(null);
  const focusOnOpen = useRef<"first" | "last" | "active">("active");
  const menuId = useId();
  const buttonId = useId();
  const active = teams.find((t) => t.slug === activeSlug);

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  }, []);
  const openMenu = (focus: "first" | "last" | "active") => {
    focusOnOpen.current = focus;
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

  const items = () => Array.from(menuRef.current?.querySelectorAll<HTMLElement>("[role^='menuitem']") ?? []);

  useEffect(() => {
    if (!open) return;
    const list = items();
    const target =
      focusOnOpen.current === "last"
        ? list[list.length - 1]
        : focusOnOpen.current === "active"
          ? (list.find((el) => el.getAttribute("aria-checked") === "true") ?? list[0])
          : list[0];
    target?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", onPointerDown);
    return () => document.removeEventListener("pointerdown", onPointerDown);
  }, [open, close]);

  function onButtonKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      openMenu(event.key === "ArrowUp" ? "last" : "first");
    }
  }

  function onMenuKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const list = items();
    const index = list.indexOf(document.activeElement as HTMLElement);
    const focusAt = (i: number) => list[(i + list.length) % list.length]?.focus();
    const keys: Record<string, () => void> = {
      ArrowDown: () => focusAt(index + 1),
      ArrowUp: () => focusAt(index - 1),
      Home: () => focusAt(0),
      End: () => focusAt(list.length - 1),
      Escape: () => close(true),
    };
    if (event.key === "Tab") return close(false);
    const run = keys[event.key];
    if (run) {
      event.preventDefault();
      run();
    }
  }

  const itemClass =
    "flex w-full items-center justify-between gap-2 rounded-md px-2.5 py-2 text-left text-sm outline-none hover:bg-accent focus-visible:bg-accent focus-visible:ring-2 focus-visible:ring-ring";

  return (
    <div ref={rootRef} className="relative">
      <button
        ref={buttonRef}
        id={buttonId}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => (open ? close(false) : openMenu("active"))}
        onKeyDown={onButtonKeyDown}
        className={cn(
          "inline-flex h-9 max-w-48 items-center gap-1.5 rounded-md border px-2.5 text-sm font-medium transition-colors hover:bg-accent hover:text-accent-foreground",
          open && "bg-accent text-accent-foreground",
        )}
      >
        <span className="sr-only">Team: </span>
        <span className="truncate">{active?.name ?? "No team"}</span>
        <ChevronDownIcon aria-hidden="true" className="shrink-0 text-muted-foreground" />
      </button>
      {open ? (
        <div className="absolute top-full left-0 z-20 mt-2 w-64 rounded-lg border bg-popover p-1 text-popover-foreground shadow-lg">
          <div
            ref={menuRef}
            id={menuId}
            role="menu"
            aria-labelledby={buttonId}
            onKeyDown={onMenuKeyDown}
            className="flex flex-col"
          >
            <div role="group" aria-label="Your teams" className="flex max-h-72 flex-col overflow-y-auto">
              {teams.map((t) => (
                <button
                  key={t.slug}
                  type="button"
                  role="menuitemradio"
                  aria-checked={t.slug === activeSlug}
                  tabIndex={-1}
                  onClick={() => (t.slug === activeSlug ? close(true) : switchTeam(t.slug))}
                  className={itemClass}
                >
                  <span className="min-w-0 truncate">{t.name}</span>
                  <span className="shrink-0 text-xs text-muted-foreground">
                    {t.slug === activeSlug ? "✓ " : ""}
                    {t.role}
                  </span>
                </button>
              ))}
            </div>
            <div role="separator" className="-mx-1 my-1 h-px bg-border" />
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              onClick={() => {
                close(true);
                startCreate();
              }}
              className={itemClass}
            >
              Create team…
            </button>
          </div>
        </div>
      ) : null}
      {createWanted ? <CreateTeamDialog open={creating} onOpenChange={setCreating} /> : null}
    </div>
  );
}

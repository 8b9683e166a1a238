"use client";

import { useEffect, useRef, type KeyboardEvent, type RefObject } from "react";
import { switchTeamHref } from "../../lib/team-param";
import type { TeamOption } from "./team-switcher";

/**
 * A switch is a navigation to the same page with the new team in the URL (lib/team-param.ts): a full
 * load, so nothing of the old team (cached lists, live streams, the header's connection) is shown
 * in the new one even for a moment, and only this tab changes team.
 */
export function switchTeam(slug: string): void {
  window.location.assign(switchTeamHref(`${window.location.pathname}${window.location.search}`, slug));
}

/** The team switcher's open menu (./team-switcher.tsx is its button): the teams, "Create team…", the keys. */
export function TeamSwitcherPanel({
  teams,
  activeSlug,
  menuId,
  buttonId,
  rootRef,
  focusOnOpen,
  close,
  startCreate,
}: {
  teams: TeamOption[];
  activeSlug: string | null;
  menuId: string;
  buttonId: string;
  rootRef: RefObject<HTMLDivElement | null>;
  focusOnOpen: "first" | "last" | "active";
  close: (refocus: boolean) => void;
  startCreate: () => void;
}) {
  const menuRef = useRef<HTMLDivElement>(null);
  const items = () => Array.from(menuRef.current?.querySelectorAll<HTMLElement>("[role^='menuitem']") ?? []);

  useEffect(() => {
    const list = items();
    const target =
      focusOnOpen === "last"
        ? list[list.length - 1]
        : focusOnOpen === "active"
          ? (list.find((el) => el.getAttribute("aria-checked") === "true") ?? list[0])
          : list[0];
    target?.focus();
    const onPointerDown = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", onPointerDown);
    return () => document.removeEventListener("pointerdown", onPointerDown);
  }, [close, focusOnOpen, rootRef]);

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
  );
}

"use client";

import dynamic from "next/dynamic";
import { useCallback, useId, useRef, useState, type KeyboardEvent, type RefObject } from "react";
import { cn } from "../../lib/utils";
import { ChevronDownIcon } from "./icons";

/** What the header shows of the signed-in user (a DTO from the console layout). */
export interface UserMenuUser {
  name: string;
  email: string;
}

// The open menu, signing out and the "Sign out everywhere?" dialog load on first use (about 2 KiB
// off every console page's first load); pointing at or focusing the button starts the download, so
// it is usually there before the click or key press that opens the menu.
const loadPanel = () => import("./user-menu-panel").then((m) => m.UserMenuPanel);
const UserMenuPanel = dynamic(loadPanel, { ssr: false });

function initials(user: UserMenuUser): string {
  const words = user.name.trim().split(/\s+/).filter(Boolean);
  const letters =
    words.length >= 2 ? `${words[0]![0]}${words[words.length - 1]![0]}` : (words[0] ?? user.email).slice(0, 2);
  return letters.toUpperCase();
}

/** What the menu panel needs from its button: who, whether it is open, and how to open and close it. */
export interface UserMenuControl {
  user: UserMenuUser;
  open: boolean;
  /** Which item takes the focus when the menu opens (ArrowUp on the button: the last). */
  focusOnOpen: "first" | "last";
  menuId: string;
  buttonId: string;
  /** The menu button and the panel: a pointer press outside it closes the menu. */
  rootRef: RefObject<HTMLDivElement | null>;
  openMenu: (focus: "first" | "last") => void;
  /** Close the menu; `refocus` puts the focus back on the menu button. */
  close: (refocus: boolean) => void;
}

/**
 * The signed-in user in the header: a menu button (ARIA menu button pattern: Enter, Space and the
 * arrow keys open it and move between items, Escape closes it and returns focus) with "Sign out"
 * and "Sign out everywhere", the latter confirmed in a dialog. Both end the session server-side.
 * This is the button; the menu itself is ./user-menu-panel.tsx, loaded when first wanted.
 */
export function UserMenu({ user }: { user: UserMenuUser }) {
  const [open, setOpen] = useState(false);
  const [focusOnOpen, setFocusOnOpen] = useState<"first" | "last">("first");
  // Once the panel has been wanted it stays mounted, so its dialog and sign-out state outlive the menu.
  const [wanted, setWanted] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const rootRef = useRef<HTMLDivElement>(null);
  const menuId = useId();
  const buttonId = useId();
  const display = user.name.trim() || user.email;

  const close = useCallback((refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  }, []);

  const openMenu = useCallback((focus: "first" | "last") => {
    setFocusOnOpen(focus);
    setWanted(true);
    setOpen(true);
  }, []);

  function onButtonKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      openMenu(event.key === "ArrowUp" ? "last" : "first");
    }
  }

  return (
    <div ref={rootRef} className="relative">
      <button
        ref={buttonRef}
        id={buttonId}
        type="button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        aria-label={`Account: ${display}`}
        onClick={() => (open ? close(false) : openMenu("first"))}
        onKeyDown={onButtonKeyDown}
        onPointerEnter={() => void loadPanel()}
        onFocus={() => void loadPanel()}
        className={cn(
          "inline-flex h-9 items-center gap-2 rounded-md pr-1.5 pl-1 text-sm transition-colors hover:bg-accent hover:text-accent-foreground sm:pr-2",
          open && "bg-accent text-accent-foreground",
        )}
      >
        {/* The initials are drawn by CSS, not as text: the accessible name ("Account: …") must contain
            the button's visible text (WCAG 2.5.3, axe label-content-name-mismatch), and they are decoration. */}
        <span
          aria-hidden="true"
          data-initials={initials(user)}
          className="inline-flex size-7 shrink-0 items-center justify-center rounded-full bg-primary text-xs font-semibold text-primary-foreground before:content-[attr(data-initials)]"
        />
        <span className="hidden max-w-40 truncate font-medium lg:inline">{display}</span>
        <ChevronDownIcon aria-hidden="true" className="hidden text-muted-foreground sm:block" />
      </button>

      {wanted ? (
        <UserMenuPanel
          user={user}
          open={open}
          focusOnOpen={focusOnOpen}
          menuId={menuId}
          buttonId={buttonId}
          rootRef={rootRef}
          openMenu={openMenu}
          close={close}
        />
      ) : null}
    </div>
  );
}

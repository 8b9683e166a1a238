"use client";

import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { errorText, OrkestrError } from "../../lib/orkestr/errors";
import { authMutations } from "../../lib/queries/auth";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { DevicesIcon, SignOutIcon } from "./account-icons";
import type { UserMenuControl } from "./user-menu";

/**
 * The account menu's open part (./user-menu.tsx is its button, in every page's first load): the
 * user, "Sign out" and "Sign out everywhere…", the arrow keys between them, and the confirmation
 * dialog. Mounted once the menu is first opened, and kept mounted.
 */
export function UserMenuPanel({
  user,
  open,
  focusOnOpen,
  menuId,
  buttonId,
  rootRef,
  openMenu,
  close,
}: UserMenuControl) {
  const [confirming, setConfirming] = useState(false);
  const [pending, setPending] = useState<null | "one" | "all">(null);
  const [error, setError] = useState<string | null>(null);
  const menuRef = useRef<HTMLDivElement>(null);

  // A failed sign-out's message stays until the menu closes (adjusted while rendering, as React
  // recommends for state that follows a prop).
  const [wasOpen, setWasOpen] = useState(open);
  if (open !== wasOpen) {
    setWasOpen(open);
    if (!open) setError(null);
  }

  const items = () => Array.from(menuRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? []);

  // Focus the first (or last) item once the menu is rendered.
  useEffect(() => {
    if (!open) return;
    const list = Array.from(menuRef.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? []);
    (focusOnOpen === "last" ? list[list.length - 1] : list[0])?.focus();
  }, [open, focusOnOpen]);

  // A pointer press outside closes the menu (focus stays where the press put it).
  useEffect(() => {
    if (!open) return;
    const onPointerDown = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener("pointerdown", onPointerDown);
    return () => document.removeEventListener("pointerdown", onPointerDown);
  }, [open, close, rootRef]);

  function onMenuKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const list = items();
    const index = list.indexOf(document.activeElement as HTMLElement);
    const focusAt = (i: number) => list[(i + list.length) % list.length]?.focus();
    switch (event.key) {
      case "ArrowDown":
        event.preventDefault();
        focusAt(index + 1);
        break;
      case "ArrowUp":
        event.preventDefault();
        focusAt(index - 1);
        break;
      case "Home":
        event.preventDefault();
        focusAt(0);
        break;
      case "End":
        event.preventDefault();
        focusAt(list.length - 1);
        break;
      case "Escape":
        event.preventDefault();
        close(true);
        break;
      case "Tab":
        close(false);
        break;
    }
  }

  async function signOut(everywhere: boolean) {
    if (pending) return;
    setPending(everywhere ? "all" : "one");
    setError(null);
    try {
      await authMutations.logout(everywhere);
    } catch (err) {
      // 401: the session had ended already, which is what was asked for.
      if (!(err instanceof OrkestrError && err.status === 401)) {
        setPending(null);
        setConfirming(false);
        setError(errorText(err));
        openMenu("first");
        return;
      }
    }
    // A full navigation: every server component re-checks and finds no session.
    window.location.assign("/login");
  }

  return (
    <>
      {open ? (
        <div className="absolute top-full right-0 z-20 mt-2 w-72 rounded-lg border bg-popover p-1 text-popover-foreground shadow-lg">
          <div className="px-2.5 pt-2 pb-2.5">
            <p className="truncate text-sm font-medium">{user.name || user.email}</p>
            {user.name ? <p className="truncate text-xs text-muted-foreground">{user.email}</p> : null}
          </div>
          <div role="none" className="-mx-1 mb-1 h-px bg-border" />
          {error ? (
            <Alert variant="destructive" className="mb-1 px-2.5 py-2">
              <AlertDescription className="text-foreground">{error}</AlertDescription>
            </Alert>
          ) : null}
          <div
            ref={menuRef}
            id={menuId}
            role="menu"
            aria-labelledby={buttonId}
            onKeyDown={onMenuKeyDown}
            className="flex flex-col"
          >
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              aria-disabled={pending !== null || undefined}
              onClick={() => void signOut(false)}
              className="flex w-full items-center gap-2 rounded-md px-2.5 py-2 text-left text-sm outline-none hover:bg-accent focus-visible:bg-accent focus-visible:ring-2 focus-visible:ring-ring aria-disabled:opacity-60"
            >
              <SignOutIcon className="text-muted-foreground" />
              {pending === "one" ? "Signing out…" : "Sign out"}
            </button>
            <button
              type="button"
              role="menuitem"
              tabIndex={-1}
              aria-disabled={pending !== null || undefined}
              onClick={() => {
                // Focus goes back to the menu button first, so the dialog returns it there on close.
                close(true);
                setConfirming(true);
              }}
              className="flex w-full items-center gap-2 rounded-md px-2.5 py-2 text-left text-sm text-destructive outline-none hover:bg-destructive/10 focus-visible:bg-destructive/10 focus-visible:ring-2 focus-visible:ring-ring aria-disabled:opacity-60"
            >
              <DevicesIcon />
              Sign out everywhere…
            </button>
          </div>
        </div>
      ) : null}

      <Dialog
        open={confirming}
        onOpenChange={setConfirming}
        title="Sign out everywhere?"
        description="This ends every session of your account, on every device and browser, this one included. You will need your password to sign in again."
      >
        <DialogActions>
          <Button
            variant="destructive"
            aria-disabled={pending !== null || undefined}
            onClick={() => void signOut(true)}
          >
            {pending === "all" ? "Signing out…" : "Sign out everywhere"}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}

"use client";

import { useEffect, useId, useRef, useState } from "react";
import { ChevronDownIcon } from "../layout/icons";
import { Button } from "../ui/button";
import { cn } from "../../lib/utils";
import { TeamLink as Link } from "../layout/team-link";

export interface RowAction {
  label: string;
  /** A page to go to (a link), or… */
  href?: string;
  /** …a dialog to open. */
  onSelect?: () => void;
  destructive?: boolean;
}

/**
 * A row's actions behind one "Actions" button (a disclosure: the items are ordinary links and
 * buttons, reached with Tab), so the table keeps its columns readable. Escape, a click elsewhere or
 * focus leaving closes it. Before an item opens a dialog, focus goes back to the Actions button,
 * so the dialog returns it there when it closes (the item itself is gone by then).
 */
export function RowActions({ name, actions }: { name: string; actions: readonly RowAction[] }) {
  // Where the panel sits (fixed, under the button): the table scrolls sideways on narrow screens,
  // and a panel inside its scroll box would be cut off at the box's edge.
  const [at, setAt] = useState<{ top: number; right: number } | null>(null);
  const open = at !== null;
  const setOpen = (next: boolean | ((o: boolean) => boolean)) => {
    const want = typeof next === "function" ? next(open) : next;
    const rect = want ? trigger.current?.getBoundingClientRect() : undefined;
    setAt(rect ? { top: rect.bottom + 4, right: window.innerWidth - rect.right } : null);
  };
  const box = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const panelId = useId();
  useEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (!box.current?.contains(e.target as Node)) setAt(null);
    };
    // A scroll or resize would leave the fixed panel behind its button: close it instead.
    const close = () => setAt(null);
    document.addEventListener("pointerdown", onPointer);
    window.addEventListener("scroll", close, true);
    window.addEventListener("resize", close);
    return () => {
      document.removeEventListener("pointerdown", onPointer);
      window.removeEventListener("scroll", close, true);
      window.removeEventListener("resize", close);
    };
  }, [open]);
  return (
    <div
      ref={box}
      className="relative inline-block"
      onKeyDown={(e) => {
        if (e.key !== "Escape" || !open) return;
        e.stopPropagation();
        setOpen(false);
        trigger.current?.focus();
      }}
      onBlur={(e) => {
        if (!box.current?.contains(e.relatedTarget as Node | null)) setOpen(false);
      }}
    >
      <Button
        ref={trigger}
        size="sm"
        variant="outline"
        aria-expanded={open}
        aria-controls={panelId}
        aria-label={`Actions for ${name}`}
        onClick={() => setOpen((o) => !o)}
      >
        Actions
        <ChevronDownIcon className={cn("size-3.5 transition-transform", open && "rotate-180")} />
      </Button>
      <div
        id={panelId}
        role="group"
        aria-label={`Actions for ${name}`}
        hidden={!open}
        style={at ? { top: at.top, right: at.right } : undefined}
        className="fixed z-20 w-52 flex-col rounded-md border bg-popover p-1 text-popover-foreground shadow-lg [&:not([hidden])]:flex"
      >
        {actions.map((a) => {
          const className = cn(
            "rounded px-2.5 py-1.5 text-left text-sm hover:bg-accent focus-visible:bg-accent focus-visible:outline-none",
            a.destructive && "text-destructive",
          );
          return a.href ? (
            <Link key={a.label} href={a.href} className={className}>
              {a.label}
            </Link>
          ) : (
            <button
              key={a.label}
              type="button"
              className={className}
              onClick={() => {
                setOpen(false);
                trigger.current?.focus();
                a.onSelect?.();
              }}
            >
              {a.label}
            </button>
          );
        })}
      </div>
    </div>
  );
}

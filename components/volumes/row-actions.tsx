"use client";

import Link from "next/link";
import { useEffect, useId, useRef, useState } from "react";
import { ChevronDownIcon } from "../layout/icons";
import { Button } from "../ui/button";
import { cn } from "../../lib/utils";

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
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const panelId = useId();
  useEffect(() => {
    if (!open) return;
    const onPointer = (e: PointerEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", onPointer);
    return () => document.removeEventListener("pointerdown", onPointer);
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
        className="absolute top-full right-0 z-20 mt-1 w-48 flex-col rounded-md border bg-popover p-1 text-popover-foreground shadow-lg [&:not([hidden])]:flex"
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

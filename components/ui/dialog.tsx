"use client";

import { useEffect, useId, useRef, type ComponentProps, type ReactNode } from "react";
import { cn } from "../../lib/utils";
import { buttonVariants } from "./button";

export type DialogProps = {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** Accessible name; rendered as the dialog's heading unless hideTitle is set (then it is screen-reader only). */
  title: ReactNode;
  description?: ReactNode;
  hideTitle?: boolean;
  children?: ReactNode;
  className?: string;
} & Omit<ComponentProps<"dialog">, "open" | "title" | "children" | "className">;

/**
 * A modal on the native <dialog> element: showModal() makes the rest of the page inert (focus stays
 * inside, the top layer handles stacking), Escape closes it, a click on the backdrop closes it, and
 * focus returns to the element that opened it. Controlled through `open` / `onOpenChange`.
 */
export function Dialog({
  open,
  onOpenChange,
  title,
  description,
  hideTitle = false,
  children,
  className,
  ...props
}: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const returnFocus = useRef<HTMLElement | null>(null);
  const titleId = useId();
  const descriptionId = useId();

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      returnFocus.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      dialog.showModal();
    } else if (!open && dialog.open) {
      dialog.close();
    }
  }, [open]);

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    // Fired for Escape, dialog.close() and form[method=dialog]; keep the owner's state in step.
    const onClose = () => {
      onOpenChange(false);
      // Back to the opener, unless closing it moved the focus on purpose (a "New file" dialog
      // hands it to the editor it opened): only focus left in the dialog or lost goes back.
      const active = document.activeElement;
      if (!active || active === document.body || dialog.contains(active)) returnFocus.current?.focus();
      returnFocus.current = null;
    };
    dialog.addEventListener("close", onClose);
    return () => dialog.removeEventListener("close", onClose);
  }, [onOpenChange]);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      // A click whose target is the <dialog> itself landed on the backdrop (content sits in the inner div).
      onClick={(event) => {
        if (event.target === event.currentTarget) event.currentTarget.close();
      }}
      className={cn(
        "m-auto w-[calc(100%-2rem)] max-w-lg rounded-lg border bg-popover p-0 text-popover-foreground shadow-lg backdrop:bg-black/50",
        className,
      )}
      {...props}
    >
      <div className="flex flex-col gap-4 p-6">
        <div className={cn("flex flex-col gap-1.5", hideTitle && "sr-only")}>
          <h2 id={titleId} className="text-lg font-semibold leading-none tracking-tight">
            {title}
          </h2>
          {description ? (
            <p id={descriptionId} className="text-sm text-muted-foreground">
              {description}
            </p>
          ) : null}
        </div>
        {open ? children : null}
      </div>
    </dialog>
  );
}

/** A button that closes the <dialog> it sits in (the dialog's close event then updates its owner). */
export function DialogClose({ onClick, type = "button", ...props }: ComponentProps<"button">) {
  return (
    <button
      type={type}
      onClick={(event) => {
        onClick?.(event);
        if (!event.defaultPrevented) event.currentTarget.closest("dialog")?.close();
      }}
      {...props}
    />
  );
}

/**
 * A dialog's footer: Cancel (closes the dialog) and the dialog's own action(s), right-aligned, the
 * action on top on narrow screens.
 */
export function DialogActions({ children, cancelDisabled }: { children: ReactNode; cancelDisabled?: boolean }) {
  return (
    <div className="flex flex-col-reverse gap-2 sm:flex-row sm:justify-end">
      <DialogClose className={buttonVariants({ variant: "outline" })} disabled={cancelDisabled}>
        Cancel
      </DialogClose>
      {children}
    </div>
  );
}

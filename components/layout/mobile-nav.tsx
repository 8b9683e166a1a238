"use client";

import { useState, type MouseEvent, type ReactNode } from "react";
import { Dialog, DialogClose } from "../ui/dialog";
import { CloseIcon, MenuIcon } from "./icons";

/**
 * Below the md breakpoint: a menu button that opens the console nav in a modal drawer. The brand and
 * the nav come rendered from the server (components/layout/sidebar.tsx, the same as the sidebar's);
 * following any of their links closes the drawer.
 */
export function MobileNav({ brand, nav }: { brand: ReactNode; nav: ReactNode }) {
  const [open, setOpen] = useState(false);
  const closeOnLink = (event: MouseEvent) => {
    if (event.target instanceof Element && event.target.closest("a")) setOpen(false);
  };
  return (
    <>
      <button
        type="button"
        aria-label="Open navigation"
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen(true)}
        className="inline-flex size-9 items-center justify-center rounded-md text-muted-foreground hover:bg-accent hover:text-accent-foreground md:hidden"
      >
        <MenuIcon width={20} height={20} />
      </button>
      <Dialog
        open={open}
        onOpenChange={setOpen}
        title="Navigation"
        hideTitle
        className="my-0 ml-0 h-dvh max-h-none w-72 max-w-[85vw] rounded-none border-y-0 border-l-0 bg-card [&>div]:gap-0 [&>div]:p-0"
      >
        {/* display: contents, so the header row and the nav stay the dialog's flex items. */}
        <div className="contents" onClick={closeOnLink}>
          <div className="flex h-14 items-center justify-between border-b px-3">
            {brand}
            <DialogClose
              aria-label="Close navigation"
              className="inline-flex size-9 items-center justify-center rounded-md text-muted-foreground hover:bg-accent hover:text-accent-foreground"
            >
              <CloseIcon width={20} height={20} />
            </DialogClose>
          </div>
          {nav}
        </div>
      </Dialog>
    </>
  );
}

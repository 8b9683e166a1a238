"use client";

import { useSyncExternalStore } from "react";
import { Dialog } from "../ui/dialog";

// The console's keyboard shortcuts: the `?` dialog lists exactly these.
export interface Shortcut {
  keys: string[];
  what: string;
}

export function shortcutList(mac: boolean): Shortcut[] {
  const mod = mac ? "⌘" : "Ctrl";
  return [
    {
      keys: [mod, "K"],
      what: "Open the command palette: jump to a sandbox, create one, pause or resume the one you are on",
    },
    { keys: ["?"], what: "Show these shortcuts" },
    { keys: ["/"], what: "Search sandboxes by id (on the sandbox list)" },
    { keys: ["↑", "↓", "Enter"], what: "Move through the palette's results and run one" },
    { keys: ["Esc"], what: "Close the palette or a dialog" },
  ];
}

const noSubscribe = () => () => {};
const isMac = () => /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);

/** The `?` dialog: every keyboard shortcut of the console (shortcutList). Loaded when first opened. */
export function ShortcutHelp({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const mac = useSyncExternalStore(noSubscribe, isMac, () => false);
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title="Keyboard shortcuts">
      <dl className="flex flex-col divide-y text-sm">
        {shortcutList(mac).map((s) => (
          <div key={s.what} className="flex items-start justify-between gap-4 py-2">
            <dt className="flex shrink-0 gap-1">
              {s.keys.map((k) => (
                <kbd key={k} className="min-w-6 rounded border bg-muted px-1.5 py-0.5 text-center font-mono text-xs">
                  {k}
                </kbd>
              ))}
            </dt>
            <dd className="text-right text-muted-foreground">{s.what}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}

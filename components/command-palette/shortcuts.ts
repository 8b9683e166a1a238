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

/** True when a key press belongs to a text field (shortcuts without a modifier must not fire there). */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

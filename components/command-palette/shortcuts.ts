// Keyboard shortcuts without a modifier (`?`, `/`) must not fire while the user types; the list of
// shortcuts the `?` dialog shows is in ./shortcut-help.tsx (loaded on first use).

/** True when a key press belongs to a text field (shortcuts without a modifier must not fire there). */
export function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
}

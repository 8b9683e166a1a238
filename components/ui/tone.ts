// The console's tones, one class list each: Badge and the sandbox StatusBadge use this map; Alert
// writes the same classes out (see alert.tsx for why) and tests/sandboxes/tone.test.ts keeps them equal.
// Tinted rather than solid, with the normal text colour: readable in both themes at text-xs (white
// text on the solid success or destructive colour falls under 4.5:1 in the light theme).
export const TONE_CLASS = {
  success: "border-success/50 bg-success/10 text-foreground",
  warning: "border-warning/60 bg-warning/15 text-foreground",
  destructive: "border-destructive/50 bg-destructive/10 text-foreground",
  neutral: "border-border bg-muted text-foreground",
  pending: "border-input bg-background text-foreground",
} as const;

export type Tone = keyof typeof TONE_CLASS;

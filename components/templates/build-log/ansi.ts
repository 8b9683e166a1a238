import { AnsiUp } from "ansi_up";

// Build output → HTML for the log view. ansi_up escapes every character of the text it is given
// (&, <, >, quotes), so the only markup in its answer is its own <span>s: nothing a build prints
// can add an element or an attribute. OSC 8 hyperlinks are turned off (a build log is no place for
// links the build chose), and the 16 basic colours become Tailwind classes with a light and a dark
// shade each, readable on the log's background in both themes (ansi_up's own RGB values are not:
// its blue on a dark background is unreadable). 256-colour and true-colour stay the RGB the
// program asked for.

const FG: Record<string, string> = {
  "ansi-black-fg": "text-zinc-900 dark:text-zinc-300",
  "ansi-red-fg": "text-red-700 dark:text-red-300",
  "ansi-green-fg": "text-green-700 dark:text-green-300",
  "ansi-yellow-fg": "text-amber-700 dark:text-amber-300",
  "ansi-blue-fg": "text-blue-700 dark:text-blue-300",
  "ansi-magenta-fg": "text-fuchsia-700 dark:text-fuchsia-300",
  "ansi-cyan-fg": "text-cyan-700 dark:text-cyan-300",
  "ansi-white-fg": "text-zinc-600 dark:text-zinc-100",
  "ansi-bright-black-fg": "text-zinc-600 dark:text-zinc-400",
  "ansi-bright-red-fg": "text-red-600 dark:text-red-300",
  "ansi-bright-green-fg": "text-green-600 dark:text-green-300",
  "ansi-bright-yellow-fg": "text-amber-600 dark:text-amber-200",
  "ansi-bright-blue-fg": "text-blue-600 dark:text-blue-200",
  "ansi-bright-magenta-fg": "text-fuchsia-600 dark:text-fuchsia-200",
  "ansi-bright-cyan-fg": "text-cyan-600 dark:text-cyan-200",
  "ansi-bright-white-fg": "text-zinc-700 dark:text-white",
};

const BG: Record<string, string> = {
  "ansi-black-bg": "bg-zinc-200 dark:bg-zinc-900",
  "ansi-red-bg": "bg-red-100 dark:bg-red-950",
  "ansi-green-bg": "bg-green-100 dark:bg-green-950",
  "ansi-yellow-bg": "bg-amber-100 dark:bg-amber-950",
  "ansi-blue-bg": "bg-blue-100 dark:bg-blue-950",
  "ansi-magenta-bg": "bg-fuchsia-100 dark:bg-fuchsia-950",
  "ansi-cyan-bg": "bg-cyan-100 dark:bg-cyan-950",
  "ansi-white-bg": "bg-zinc-100 dark:bg-zinc-700",
  "ansi-bright-black-bg": "bg-zinc-300 dark:bg-zinc-800",
  "ansi-bright-red-bg": "bg-red-200 dark:bg-red-900",
  "ansi-bright-green-bg": "bg-green-200 dark:bg-green-900",
  "ansi-bright-yellow-bg": "bg-amber-200 dark:bg-amber-900",
  "ansi-bright-blue-bg": "bg-blue-200 dark:bg-blue-900",
  "ansi-bright-magenta-bg": "bg-fuchsia-200 dark:bg-fuchsia-900",
  "ansi-bright-cyan-bg": "bg-cyan-200 dark:bg-cyan-900",
  "ansi-bright-white-bg": "bg-zinc-50 dark:bg-zinc-600",
};

/** One converter per output stream: a colour set on one line carries to the next, as in a terminal. */
export function newAnsiConverter(): (text: string) => string {
  const ansi = new AnsiUp();
  ansi.use_classes = true;
  ansi.escape_html = true;
  ansi.url_allowlist = {};
  return (text) =>
    ansi
      .ansi_to_html(text)
      // Only ansi_up's own class attributes can match: every quote in the text was escaped.
      .replace(/ class="([^"]*)"/g, (_, names: string) => {
        const mapped = names
          .split(" ")
          .map((n) => FG[n] ?? BG[n] ?? "")
          .filter(Boolean)
          .join(" ");
        return mapped ? ` class="${mapped}"` : "";
      });
}

/**
 * What a terminal would show of one output line: the text after its last carriage return (progress
 * bars redraw themselves with \r), without the line's own ending.
 */
export function visibleLine(data: string): string {
  const line = data.replace(/\r?\n$/, "");
  const parts = line.split("\r");
  for (let i = parts.length - 1; i >= 0; i--) if (parts[i]) return parts[i]!;
  return "";
}

"use client";

import { useMemo } from "react";
import { languageFor, tokenize, type TokenKind } from "./highlight";

/** Past this many characters the text is shown plain: tens of thousands of spans would slow the page. */
const HIGHLIGHT_MAX_CHARS = 200_000;

// Colours chosen for 4.5:1 contrast on the card background in both themes.
const KIND_CLASS: Record<TokenKind, string> = {
  plain: "",
  comment: "text-muted-foreground italic",
  string: "text-emerald-700 dark:text-emerald-400",
  number: "text-amber-700 dark:text-amber-300",
  keyword: "text-violet-700 dark:text-violet-300",
  tag: "text-sky-700 dark:text-sky-300",
};

/** A read-only text file with line numbers and light syntax colouring (see highlight.ts). */
export function CodeView({ text, fileName }: { text: string; fileName: string }) {
  const language = languageFor(fileName);
  const tokens = useMemo(
    () => (text.length <= HIGHLIGHT_MAX_CHARS ? tokenize(text, language) : [{ kind: "plain" as const, text }]),
    [text, language],
  );
  const lines = useMemo(() => {
    const n = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
    return Array.from({ length: Math.max(1, n) }, (_, i) => i + 1).join("\n");
  }, [text]);
  return (
    // tabIndex: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable).
    <div
      role="region"
      tabIndex={0}
      aria-label={`Contents of ${fileName}`}
      className="flex max-h-[60vh] min-h-40 overflow-auto rounded-md border bg-background font-mono text-[13px] leading-5 outline-none focus-visible:ring-2 focus-visible:ring-ring"
    >
      <pre
        aria-hidden="true"
        className="sticky left-0 shrink-0 select-none border-r bg-muted px-3 py-2 text-right text-muted-foreground"
      >
        {lines}
      </pre>
      <pre className="min-w-0 flex-1 px-3 py-2">
        <code data-language={language ?? "plain"}>
          {tokens.map((t, i) =>
            t.kind === "plain" ? (
              t.text
            ) : (
              <span key={i} className={KIND_CLASS[t.kind]}>
                {t.text}
              </span>
            ),
          )}
        </code>
      </pre>
    </div>
  );
}

"use client";

import { useEffect, useMemo, useState } from "react";
import { HIGHLIGHT_MAX_CHARS, highlight, languageFor, type Language } from "./highlight";

/**
 * A read-only text file with line numbers, coloured by highlight.js once its grammar has loaded
 * (plain text until then, and for unknown types and large files). The colours are the `.hljs-*`
 * rules in app/globals.css, for both themes.
 */
export function CodeView({ text, fileName }: { text: string; fileName: string }) {
  const language = languageFor(fileName);
  const colourable = language !== null && text.length <= HIGHLIGHT_MAX_CHARS;
  const [coloured, setColoured] = useState<{ text: string; language: Language; html: string } | null>(null);
  useEffect(() => {
    if (!colourable) return;
    let current = true;
    highlight(text, language).then(
      (html) => current && setColoured({ text, language, html }),
      // A grammar that fails to load (offline, a new deployment) leaves the text plain.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [text, language, colourable]);
  // Only highlight.js's output for exactly this text is rendered as HTML (it escapes the text).
  const html = coloured && coloured.text === text && coloured.language === language ? coloured.html : null;
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
        {html === null ? (
          <code data-language={language ?? "plain"}>{text}</code>
        ) : (
          <code data-language={language ?? "plain"} dangerouslySetInnerHTML={{ __html: html }} />
        )}
      </pre>
    </div>
  );
}

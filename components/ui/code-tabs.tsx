"use client";

import { useId, useState } from "react";
import { CODE_LANGUAGES, type CodeLanguage, type Snippets } from "../../lib/code/snippet";
import { cn } from "../../lib/utils";
import { CopyButton } from "./copy-button";

/**
 * An action as code (Python SDK, JS SDK, curl) in tabs, with a copy button: arrow keys move between
 * the tabs, as in the ARIA tabs pattern. Ids come from useId, so several can share a page.
 */
export function CodeTabs({ snippets, testId = "request-code" }: { snippets: Snippets; testId?: string }) {
  const [language, setLanguage] = useState<CodeLanguage>("python");
  const base = useId();
  const tabId = (id: CodeLanguage) => `${base}-tab-${id}`;
  const panelId = `${base}-panel`;
  const code = snippets[language];
  const move = (delta: number) => {
    const i = CODE_LANGUAGES.findIndex((l) => l.id === language);
    const next = CODE_LANGUAGES[(i + delta + CODE_LANGUAGES.length) % CODE_LANGUAGES.length]!;
    setLanguage(next.id);
    document.getElementById(tabId(next.id))?.focus();
  };
  return (
    <div className="flex flex-col gap-2">
      <div className="flex items-center justify-between gap-2">
        <div role="tablist" aria-label="Language" className="inline-flex rounded-md border p-0.5">
          {CODE_LANGUAGES.map((l) => (
            <button
              key={l.id}
              id={tabId(l.id)}
              type="button"
              role="tab"
              aria-selected={language === l.id}
              aria-controls={panelId}
              tabIndex={language === l.id ? 0 : -1}
              onClick={() => setLanguage(l.id)}
              onKeyDown={(e) => {
                if (e.key === "ArrowRight") move(1);
                if (e.key === "ArrowLeft") move(-1);
              }}
              className={cn(
                "rounded px-2.5 py-1 text-xs font-medium",
                language === l.id
                  ? "bg-primary text-primary-foreground"
                  : "text-muted-foreground hover:text-foreground",
              )}
            >
              {l.label}
            </button>
          ))}
        </div>
        <CopyButton text={code} label="Copy code" />
      </div>
      <pre
        id={panelId}
        role="tabpanel"
        aria-labelledby={tabId(language)}
        tabIndex={0}
        data-testid={testId}
        className="max-h-96 overflow-auto rounded-md border bg-muted/50 p-3 font-mono text-xs leading-relaxed"
      >
        <code>{code}</code>
      </pre>
    </div>
  );
}

"use client";

import { useState } from "react";
import type { CreateSandboxBody } from "../../../lib/orkestr/schemas/sandboxes";
import { cn } from "../../../lib/utils";
import { CopyButton } from "../../ui/copy-button";
import { requestCode, type CodeLanguage } from "./request-code";

const LANGUAGES: { id: CodeLanguage; label: string }[] = [
  { id: "python", label: "Python" },
  { id: "javascript", label: "JavaScript" },
  { id: "curl", label: "curl" },
];

/** The form's request as code, in tabs (arrow keys move between them, as in the ARIA tabs pattern). */
export function ShowCode({ body, baseUrl }: { body: CreateSandboxBody; baseUrl?: string }) {
  const [language, setLanguage] = useState<CodeLanguage>("python");
  const code = requestCode(language, body, baseUrl);
  const move = (delta: number) => {
    const i = LANGUAGES.findIndex((l) => l.id === language);
    const next = LANGUAGES[(i + delta + LANGUAGES.length) % LANGUAGES.length]!;
    setLanguage(next.id);
    document.getElementById(`code-tab-${next.id}`)?.focus();
  };
  return (
    <div className="flex flex-col gap-2">
      <div className="flex items-center justify-between gap-2">
        <div role="tablist" aria-label="Language" className="inline-flex rounded-md border p-0.5">
          {LANGUAGES.map((l) => (
            <button
              key={l.id}
              id={`code-tab-${l.id}`}
              type="button"
              role="tab"
              aria-selected={language === l.id}
              aria-controls="code-panel"
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
        id="code-panel"
        role="tabpanel"
        aria-labelledby={`code-tab-${language}`}
        tabIndex={0}
        data-testid="request-code"
        className="max-h-96 overflow-auto rounded-md border bg-muted/50 p-3 font-mono text-xs leading-relaxed"
      >
        <code>{code}</code>
      </pre>
    </div>
  );
}

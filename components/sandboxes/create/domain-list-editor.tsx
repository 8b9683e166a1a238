"use client";

import { useState } from "react";
import { Button } from "../../ui/button";
import { Input } from "../../ui/input";
import { normalizeDomain } from "./create-request";
import { FieldError } from "./form-field";

/**
 * The allow_domains editor of a restricted sandbox: the list replaces the default set entirely
 * (seed 003), so it starts as the defaults and can be reset to them.
 */
export function DomainListEditor({
  domains,
  defaults,
  onChange,
  error,
}: {
  domains: string[];
  defaults: readonly string[];
  onChange: (domains: string[]) => void;
  error?: string;
}) {
  const [draft, setDraft] = useState("");
  const [draftError, setDraftError] = useState<string | null>(null);
  const add = () => {
    const parts = draft.split(/[\s,]+/).filter(Boolean);
    if (!parts.length) return;
    const normalized = parts.map((p) => [p, normalizeDomain(p)] as const);
    const bad = normalized.find(([, d]) => d === null);
    if (bad) {
      setDraftError(`"${bad[0]}" is not a host name (e.g. api.example.com or *.example.com).`);
      return;
    }
    const next = [...domains];
    for (const [, d] of normalized) if (!next.includes(d!)) next.push(d!);
    onChange(next);
    setDraft("");
    setDraftError(null);
  };
  const isDefault = domains.length === defaults.length && domains.every((d, i) => d === defaults[i]);
  return (
    <div className="flex flex-col gap-2">
      <ul aria-label="Allowed domains" className="flex flex-wrap gap-1.5">
        {domains.map((d) => (
          <li
            key={d}
            className="inline-flex items-center gap-1 rounded-md border bg-muted/50 py-0.5 pr-0.5 pl-2 font-mono text-xs"
          >
            {d}
            <button
              type="button"
              onClick={() => onChange(domains.filter((x) => x !== d))}
              aria-label={`Remove ${d}`}
              className="rounded px-1.5 py-0.5 text-muted-foreground hover:bg-accent hover:text-foreground"
            >
              ×
            </button>
          </li>
        ))}
        {domains.length === 0 ? (
          <li className="text-xs text-muted-foreground">No domains: the sandbox reaches nothing.</li>
        ) : null}
      </ul>
      <div className="flex flex-wrap gap-2 sm:flex-nowrap">
        <Input
          id="allow-domain-new"
          aria-label="Add a domain"
          placeholder="api.internal.example.com"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              add();
            }
          }}
          aria-invalid={draftError ? true : undefined}
          aria-describedby={draftError ? "allow-domain-new-error" : undefined}
          autoComplete="off"
          spellCheck={false}
          className="font-mono"
        />
        <Button variant="outline" size="sm" className="h-9" onClick={add}>
          Add domain
        </Button>
        <Button variant="ghost" size="sm" className="h-9" disabled={isDefault} onClick={() => onChange([...defaults])}>
          Reset to defaults
        </Button>
      </div>
      <FieldError id="allow-domain-new-error" error={draftError ?? undefined} />
      <FieldError id="allow_domains-error" error={error} />
    </div>
  );
}

"use client";

import { useId, useState, useSyncExternalStore } from "react";
import { agentSnippets } from "../../../lib/api-tokens/agent-config";
import { CopyButton } from "../../ui/copy-button";

/**
 * How to point an agent (over MCP) or the orkestr SDK at Baton, with this Baton's address and the
 * token filled in: a choice of client, then the config or command to copy.
 */
const noSubscribe = () => () => undefined;

export function AgentSetup({ token }: { token: string }) {
  // The page's origin once in the browser; "" in the server's render and while hydrating (a
  // different text then would be a hydration mismatch).
  const origin = useSyncExternalStore(
    noSubscribe,
    () => window.location.origin,
    () => "",
  );
  const snippets = agentSnippets(origin, token);
  const [chosen, setChosen] = useState(snippets[0]!.id);
  const id = useId();
  const snippet = snippets.find((s) => s.id === chosen) ?? snippets[0]!;
  return (
    <div className="flex flex-col gap-2" data-testid="agent-setup">
      <div className="flex flex-wrap items-center gap-2">
        <label htmlFor={`${id}-client`} className="text-sm font-medium">
          Use it from
        </label>
        <select
          id={`${id}-client`}
          value={chosen}
          onChange={(e) => setChosen(e.target.value)}
          className="h-8 rounded-md border border-input bg-background px-2 text-sm"
        >
          {snippets.map((s) => (
            <option key={s.id} value={s.id}>
              {s.label}
            </option>
          ))}
        </select>
        <span className="text-xs text-muted-foreground">{snippet.where}</span>
      </div>
      <div className="flex flex-col gap-2 sm:flex-row sm:items-start">
        <pre
          tabIndex={0}
          role="region"
          aria-label={`${snippet.label}: configuration`}
          className="min-w-0 flex-1 overflow-x-auto rounded bg-muted px-2 py-1 font-mono text-xs"
          data-testid="agent-snippet"
        >
          {snippet.text}
        </pre>
        <CopyButton text={snippet.text} label={`Copy for ${snippet.label}`} size="sm" variant="outline" />
      </div>
    </div>
  );
}

import type { MemoryFact } from "./snapshot-facts";

/** Whether a snapshot holds memory: yes / no / not said, with what a fork gets and the server's reason. */
export function MemoryCell({ fact, long = false }: { fact: MemoryFact; long?: boolean }) {
  const word = fact.captured === "yes" ? "Yes" : fact.captured === "no" ? "No" : "Not said";
  if (!long)
    return (
      <span title={[fact.summary, fact.reason].filter(Boolean).join(" ")}>
        {word}
        <span className="sr-only">: {fact.summary}</span>
      </span>
    );
  return (
    <span className="flex flex-col gap-0.5">
      <span>
        <span className="font-medium">{word}.</span> {fact.summary}
      </span>
      {fact.reason ? <span className="text-xs text-muted-foreground">The engine says: {fact.reason}.</span> : null}
    </span>
  );
}

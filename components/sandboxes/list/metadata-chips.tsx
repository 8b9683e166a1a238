/** A sandbox's metadata as `key=value` chips on one line; the rest is counted and in the tooltip. */
export function MetadataChips({
  metadata,
  max = 2,
}: {
  metadata: Record<string, unknown> | null | undefined;
  max?: number;
}) {
  const entries = Object.entries(metadata ?? {}).map(
    ([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
  );
  if (entries.length === 0) return <span className="text-muted-foreground">—</span>;
  const shown = entries.slice(0, max);
  return (
    <div className="flex min-w-0 items-center gap-1" title={entries.join("\n")}>
      {shown.map((e) => (
        <span
          key={e}
          className="max-w-36 truncate rounded bg-muted px-1.5 py-0.5 font-mono text-[11px] text-foreground"
        >
          {e}
        </span>
      ))}
      {entries.length > max ? (
        <span className="shrink-0 text-[11px] text-muted-foreground">+{entries.length - max}</span>
      ) : null}
    </div>
  );
}

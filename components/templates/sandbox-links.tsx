import Link from "next/link";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import { sandboxHref } from "../../lib/links";
import { StatusBadge } from "../sandboxes/status-badge";

/** The live sandboxes running a template, as links with their status; the first `max`, then a count. */
export function SandboxLinks({ sandboxes, max = 3 }: { sandboxes: readonly Sandbox[]; max?: number }) {
  if (!sandboxes.length) return <span className="text-muted-foreground">None</span>;
  const shown = sandboxes.slice(0, max);
  return (
    <ul className="flex flex-col gap-1">
      {shown.map((s) => (
        <li key={s.id} className="flex items-center gap-2">
          <Link
            href={sandboxHref(s.id)}
            className="font-mono text-xs font-medium text-primary underline-offset-4 hover:underline"
          >
            {s.id}
          </Link>
          <StatusBadge status={s.status} />
        </li>
      ))}
      {sandboxes.length > shown.length ? (
        <li className="text-xs text-muted-foreground">and {sandboxes.length - shown.length} more</li>
      ) : null}
    </ul>
  );
}

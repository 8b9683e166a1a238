import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import { sandboxHref } from "../../lib/links";
import { StatusBadge } from "../sandboxes/status-badge";
import { TeamLink as Link } from "../layout/team-link";

/** The live sandboxes running a template, as links with their status; the first `max`, then a count. */
export function SandboxLinks({ sandboxes, max = 3 }: { sandboxes: readonly Sandbox[]; max?: number }) {
  if (!sandboxes.length) return <span className="text-muted-foreground">None</span>;
  const shown = sandboxes.slice(0, max);
  return (
    <ul className="flex flex-col gap-1">
      {shown.map((s) => (
        <li key={s.id} className="flex min-w-0 items-center gap-2">
          {/* Ids share their time prefix and differ at the end: a long one is cut at the start. */}
          <Link
            href={sandboxHref(s.id)}
            title={s.id}
            className="truncate font-mono text-xs font-medium text-primary underline-offset-4 [direction:rtl] hover:underline"
          >
            {s.id}
          </Link>
          <StatusBadge status={s.status} className="shrink-0" />
        </li>
      ))}
      {sandboxes.length > shown.length ? (
        <li className="text-xs text-muted-foreground">and {sandboxes.length - shown.length} more</li>
      ) : null}
    </ul>
  );
}

import { sandboxHref } from "../../lib/links";
import { cn } from "../../lib/utils";
import { TeamLink as Link } from "../layout/team-link";

/**
 * The sandbox that holds a volume, as a link to its page. `compact` cuts a long id at its start
 * (ids share their time prefix and differ at the end); the link's name stays the whole id.
 */
export function HolderLink({ id, compact = false }: { id: string; compact?: boolean }) {
  return (
    <Link
      href={sandboxHref(id)}
      title={compact ? id : undefined}
      className={cn(
        "font-mono text-primary underline-offset-4 hover:underline",
        compact && "inline-block max-w-36 truncate align-bottom [direction:rtl]",
      )}
      data-testid="volume-holder"
    >
      {id}
    </Link>
  );
}

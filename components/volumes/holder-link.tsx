import Link from "next/link";
import { sandboxHref } from "../../lib/links";

/** The sandbox that holds a volume, as a link to its page. */
export function HolderLink({ id }: { id: string }) {
  return (
    <Link
      href={sandboxHref(id)}
      className="font-mono text-primary underline-offset-4 hover:underline"
      data-testid="volume-holder"
    >
      {id}
    </Link>
  );
}

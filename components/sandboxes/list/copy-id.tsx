"use client";

import { CopyButton, CopyIcon } from "../../ui/copy-button";
import { sandboxHref } from "../../../lib/links";

/** The id as a link to the sandbox's page, and a button that copies it. */
export function SandboxIdCell({ id }: { id: string }) {
  return (
    <div className="flex min-w-0 items-center gap-1">
      {/* A plain link: the table navigates client-side with one delegated handler (data-row-link). */}
      <a
        href={sandboxHref(id)}
        data-row-link=""
        // Ids share their time prefix and differ at the end: a long one is cut at the start (right-to-left
        // overflow), and the text itself stays whole, so the link's name is the full id.
        className="truncate text-left font-mono text-xs font-medium text-primary underline-offset-4 [direction:rtl] hover:underline"
        title={id}
      >
        {id}
      </a>
      <CopyButton
        text={id}
        label={<CopyIcon />}
        copiedLabel={<CopyIcon />}
        announce={{ title: "Copied the sandbox id", description: id }}
        variant="ghost"
        aria-label={`Copy id ${id}`}
        title="Copy id"
        className="size-6 shrink-0 p-0 text-muted-foreground [&_svg]:size-3.5"
      />
    </div>
  );
}

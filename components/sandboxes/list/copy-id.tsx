"use client";

import { toast } from "../../ui/toast";

/** The id as a link to the sandbox's page, and a button that copies it. */
export function SandboxIdCell({ id }: { id: string }) {
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(id);
      toast.success("Copied the sandbox id", { description: id });
    } catch {
      toast.error("Could not copy", { description: "The browser did not allow access to the clipboard." });
    }
  };
  return (
    <div className="flex min-w-0 items-center gap-1">
      {/* A plain link: the table navigates client-side with one delegated handler (data-row-link). */}
      <a
        href={`/sandboxes/${encodeURIComponent(id)}`}
        data-row-link=""
        // Ids share their time prefix and differ at the end: a long one is cut at the start (right-to-left
        // overflow), and the text itself stays whole, so the link's name is the full id.
        className="truncate text-left font-mono text-xs font-medium text-primary underline-offset-4 [direction:rtl] hover:underline"
        title={id}
      >
        {id}
      </a>
      <button
        type="button"
        onClick={copy}
        aria-label={`Copy id ${id}`}
        title="Copy id"
        className="inline-flex size-6 shrink-0 items-center justify-center rounded text-muted-foreground hover:bg-accent hover:text-accent-foreground"
      >
        <svg
          aria-hidden="true"
          viewBox="0 0 24 24"
          className="size-3.5"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
          strokeLinecap="round"
          strokeLinejoin="round"
        >
          <rect x="9" y="9" width="13" height="13" rx="2" />
          <path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1" />
        </svg>
      </button>
    </div>
  );
}

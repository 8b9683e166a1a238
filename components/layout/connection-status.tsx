import { cn } from "../../lib/utils";
import { TeamLink as Link } from "./team-link";

export type ConnectionState = "ok" | "error" | "unknown" | "none";

export interface ConnectionStatusProps {
  /** The connection's name, e.g. "Local engine". */
  label: string;
  /** The orkestr API it points at; empty when there is no connection. */
  baseUrl: string;
  state: ConnectionState;
  /** Why: the last error, the check time, or what to do next. */
  detail?: string;
  className?: string;
  /**
   * Where to fix it (no connection yet): the state and label become a link there, named by exactly
   * the words it shows (WCAG 2.5.3), inside the status so it keeps its live announcements.
   */
  href?: string;
}

/** The state in words, as the indicator shows it (and names its link with). */
export const CONNECTION_STATE_TEXT: Record<ConnectionState, string> = {
  ok: "Connected",
  error: "Not answering",
  unknown: "Checking",
  none: "Not connected",
};

const dotClass: Record<ConnectionState, string> = {
  ok: "bg-success",
  error: "bg-destructive",
  unknown: "bg-warning animate-pulse",
  none: "bg-muted-foreground/50",
};

/**
 * Which orkestr API the console talks to and whether it answers: a dot (decorative), the state in
 * words, the label, and the base URL plus detail as a title tooltip and, for screen readers, as text.
 * role="status" announces changes politely once the state is polled.
 */
export function ConnectionStatus({ label, baseUrl, state, detail, className, href }: ConnectionStatusProps) {
  const tooltip = [baseUrl || null, detail ?? null].filter(Boolean).join(" · ");
  const words = (
    <>
      {/* On a phone the header has no room for "Connected": the green dot says it (the words stay for
          screen readers and the tooltip), while any other state keeps its words, so trouble is never
          told by colour alone. */}
      <span className={cn("font-medium whitespace-nowrap", state === "ok" && "max-sm:sr-only")}>
        {CONNECTION_STATE_TEXT[state]}
      </span>{" "}
      <span aria-hidden={href ? undefined : true} className="hidden min-w-0 truncate text-muted-foreground sm:inline">
        {label}
      </span>
    </>
  );
  return (
    <div
      role="status"
      data-state={state}
      title={tooltip || undefined}
      className={cn(
        "inline-flex min-w-0 items-center gap-2 rounded-md border bg-background px-2.5 py-1 text-xs",
        className,
      )}
    >
      <span aria-hidden="true" className={cn("size-2 shrink-0 rounded-full", dotClass[state])} />
      {href ? (
        <Link
          href={href}
          className="inline-flex min-w-0 items-center gap-2 rounded-sm focus-visible:outline-2 focus-visible:outline-ring"
        >
          {words}
        </Link>
      ) : (
        words
      )}
      <span className="sr-only">
        {`: ${label}`}
        {baseUrl ? ` at ${baseUrl}` : ""}
        {detail ? `. ${detail}` : ""}
      </span>
    </div>
  );
}

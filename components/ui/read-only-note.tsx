import type { ReactNode } from "react";
import { cn } from "../../lib/utils";
import { Icon } from "./icon";

/**
 * Why a write control is not offered here: the role's reason (lib/role-reason.ts), shown as visible
 * text where the control would be, so keyboard and screen-reader users meet it too. A disabled
 * control that stays points at it with aria-describedby={id}.
 */
export function ReadOnlyNote({
  id,
  children,
  className,
  block = false,
}: {
  id?: string;
  children: ReactNode;
  className?: string;
  /** A dashed box of its own (a whole panel is read only) rather than a line of text. */
  block?: boolean;
}) {
  return (
    <p
      id={id}
      role="note"
      data-testid="read-only"
      className={cn(
        "flex items-start gap-1.5 text-sm text-muted-foreground",
        block && "rounded-lg border border-dashed px-4 py-3",
        className,
      )}
    >
      <Icon className="mt-0.5 shrink-0">
        <rect x="5" y="11" width="14" height="10" rx="1.5" />
        <path d="M8 11V8a4 4 0 0 1 8 0v3" />
      </Icon>
      <span>{children}</span>
    </p>
  );
}

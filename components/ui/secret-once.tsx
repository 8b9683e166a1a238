import type { ComponentProps, ReactNode } from "react";
import { Alert, AlertDescription, AlertTitle } from "./alert";
import { Button } from "./button";
import { CopyButton } from "./copy-button";

type Announce = ComponentProps<typeof CopyButton>["announce"];

/** A value to be copied exactly (a secret, a link, a command): its text, wrapped anywhere on a narrow screen, with a copy button beside it. */
export function CopyableValue({
  value,
  copyLabel,
  announce,
  valueTestId,
}: {
  value: string;
  /** The button's name, saying what it copies ("Copy token"): a page may have more than one. */
  copyLabel: string;
  announce?: Announce;
  valueTestId?: string;
}) {
  return (
    <div className="flex flex-col gap-2 sm:flex-row sm:items-center">
      <code className="min-w-0 break-all rounded bg-muted px-2 py-1 font-mono text-xs" data-testid={valueTestId}>
        {value}
      </code>
      <CopyButton text={value} label={copyLabel} size="sm" variant="outline" announce={announce} />
    </div>
  );
}

/**
 * A secret that Baton shows only once (an API token, a signing secret, an invitation link): what it
 * is, the sentence that says it will not be shown again, the value with its copy button, anything
 * more about using it (`children`), and Done, after which the caller forgets the value. The block is
 * a polite live region, so it is announced when it appears and the button's "Copied" is heard too.
 */
export function SecretOnce({
  title,
  notice,
  value,
  copyLabel,
  announce,
  valueTestId,
  variant = "default",
  onDone,
  children,
  ...props
}: {
  title: ReactNode;
  /** What to do with it now, and that it is shown only this once. */
  notice: ReactNode;
  value: string;
  copyLabel: string;
  announce?: Announce;
  valueTestId?: string;
  variant?: "default" | "success" | "warning";
  onDone: () => void;
  children?: ReactNode;
} & Omit<ComponentProps<"div">, "title" | "children" | "role">) {
  return (
    <Alert variant={variant} role="status" {...props}>
      <AlertTitle>{title}</AlertTitle>
      <AlertDescription className="flex flex-col gap-2 text-foreground">
        <p>{notice}</p>
        <CopyableValue value={value} copyLabel={copyLabel} announce={announce} valueTestId={valueTestId} />
        {children}
        <div>
          <Button size="sm" variant="ghost" onClick={onDone}>
            Done
          </Button>
        </div>
      </AlertDescription>
    </Alert>
  );
}

"use client";

import { useId, useState, type FormEvent, type ReactNode } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";

/**
 * The sign-in and first-run forms' frame: one request at a time, the server's `detail` in the
 * error slot above the fields, and a full navigation on success (so the next page is rendered
 * with the new session cookie).
 */
export function AuthForm({
  send,
  next,
  submitLabel,
  pendingLabel,
  proceed,
  children,
}: {
  /** The request for the filled-in form (through lib/queries/auth.ts), or null when a check here failed. */
  send: (form: FormData, element: HTMLFormElement) => Promise<unknown> | null;
  /** Where to go once it succeeded. */
  next: () => string;
  submitLabel: string;
  pendingLabel: string;
  /** Given the answer, whether to go on to `next()` (false: the form shows another step instead). */
  proceed?: (answer: unknown) => boolean;
  children: ReactNode;
}) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    setError(null);
    const request = send(new FormData(event.currentTarget), event.currentTarget);
    if (!request) return;
    setPending(true);
    try {
      const answer = await request;
      if (proceed && !proceed(answer)) {
        setPending(false);
        return;
      }
      window.location.assign(next());
    } catch (err) {
      setError(errorText(err));
      setPending(false);
    }
  }

  return (
    // method="post": a submit before hydration must never put the password in the URL.
    <form
      method="post"
      onSubmit={onSubmit}
      aria-busy={pending}
      aria-describedby={error ? errorId : undefined}
      className="flex flex-col gap-4"
    >
      {error ? (
        <Alert variant="destructive" id={errorId}>
          <AlertDescription className="text-foreground">{error}</AlertDescription>
        </Alert>
      ) : null}
      {children}
      <Button type="submit" aria-disabled={pending} className="mt-2 w-full">
        {pending ? pendingLabel : submitLabel}
      </Button>
    </form>
  );
}

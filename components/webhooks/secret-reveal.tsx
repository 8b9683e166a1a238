"use client";

import { useId } from "react";
import { Alert, AlertDescription, AlertTitle } from "../ui/alert";
import { CodeTabs } from "../ui/code-tabs";
import { CopyButton } from "../ui/copy-button";
import { verifySnippets } from "./snippets";

/**
 * A signing secret, shown the one time the API returns it (create, rotate). It lives only in the
 * state of the dialog that shows it: closing the dialog drops it, and nothing caches or stores it.
 */
export function SecretReveal({ secret, rotated = false }: { secret: string; rotated?: boolean }) {
  const id = useId();
  return (
    <div className="flex flex-col gap-3" data-testid="secret-reveal">
      <Alert variant="warning" role="status">
        <AlertTitle>Copy this secret now: it will not be shown again</AlertTitle>
        <AlertDescription className="text-foreground">
          {rotated
            ? "The old secret stopped signing at once: deliveries from now on, retries included, are signed with this one. Update your receiver."
            : "Your receiver needs it to check that a delivery came from orkestr. Store it in your secrets manager; if it is lost, rotate the secret to get a new one."}
        </AlertDescription>
      </Alert>
      <div className="flex flex-col gap-1.5">
        <label htmlFor={id} className="text-sm font-medium">
          Signing secret
        </label>
        <div className="flex items-center gap-2">
          <input
            id={id}
            readOnly
            value={secret}
            data-testid="webhook-secret"
            // Not remembered by the browser's form history or password managers.
            autoComplete="off"
            spellCheck={false}
            onFocus={(e) => e.currentTarget.select()}
            className="h-9 min-w-0 flex-1 rounded-md border border-input bg-muted/50 px-3 font-mono text-sm"
          />
          <CopyButton text={secret} label="Copy secret" announce={{ title: "Secret copied" }} />
        </div>
      </div>
      <details className="rounded-md border px-3 py-2 text-sm">
        <summary className="cursor-pointer font-medium">How to verify a delivery's signature</summary>
        <p className="my-2 text-muted-foreground">
          Each delivery carries <code className="font-mono">X-Orkestr-Signature: sha256=…</code>, the HMAC-SHA256 of the
          raw body keyed by this secret. Check it before parsing the body.
        </p>
        <CodeTabs snippets={verifySnippets()} testId="verify-code" />
      </details>
    </div>
  );
}

"use client";

import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from "../../ui/card";
import { CopyButton } from "../../ui/copy-button";
import { sandboxHref } from "../../../lib/links";
import { TeamLink as Link } from "../../layout/team-link";

/**
 * The sandbox's preview_auth_token, which the create response carries once: shown here once, with a
 * copy button, and kept nowhere (leaving this page forgets it; a new one can be minted later).
 */
export function PreviewTokenNotice({ sandboxId, token }: { sandboxId: string; token: string }) {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Sandbox {sandboxId} is running</CardTitle>
        <CardDescription>Its preview URLs are protected: every request must carry this token.</CardDescription>
      </CardHeader>
      <CardContent className="flex flex-col gap-4">
        <Alert variant="warning" role="status">
          <AlertTitle>Copy the preview token now</AlertTitle>
          <AlertDescription className="text-foreground">
            It is shown only this once. Baton does not store it; you can rotate it later to get a new one.
          </AlertDescription>
        </Alert>
        <div className="flex flex-wrap items-center gap-2">
          <code
            data-testid="preview-token"
            className="min-w-0 flex-1 break-all rounded-md border bg-muted/50 px-3 py-2 font-mono text-sm"
          >
            {token}
          </code>
          <CopyButton text={token} label="Copy token" />
        </div>
        <div>
          <Button asChild>
            <Link href={sandboxHref(sandboxId)}>Continue to the sandbox</Link>
          </Button>
        </div>
      </CardContent>
    </Card>
  );
}

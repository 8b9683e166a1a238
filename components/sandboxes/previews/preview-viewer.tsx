"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { OrkestrError } from "../../../lib/orkestr/errors";
import { DESCRIBE_INTERVAL_MS, previewQueries, withPreviewToken } from "../../../lib/queries/previews";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Badge } from "../../ui/badge";
import { Button } from "../../ui/button";
import { CopyButton, CopyIcon } from "../../ui/copy-button";
import { Skeleton } from "../../ui/skeleton";
import { ExternalLinkIcon, GlobeIcon, LockIcon, RefreshIcon } from "../files/icons";
import { errorText } from "../../../lib/orkestr/errors";
import { PreviewTokenPanel } from "./preview-token-panel";
import { setPreviewToken, usePreviewToken } from "./preview-token-store";

/**
 * The iframe's sandbox. The preview is another origin (`<port>-<id>.sbx.localhost` or
 * `*.sbx.orkestr.run`), so allow-same-origin gives it *its own* origin (its cookies, storage, the
 * preview cookie), never the console's: scripts in it cannot reach the console's DOM, cookies or
 * API. allow-scripts/forms/popups let real apps run. Left out: top navigation (it cannot navigate
 * the console away), downloads, modals, pointer lock; popups stay sandboxed too.
 */
export const PREVIEW_IFRAME_SANDBOX = "allow-scripts allow-forms allow-same-origin allow-popups";

/** Why a preview cannot be shown, in plain words, from the upstream's error code. */
function previewProblem(error: unknown, port: number): { title: string; body: string } {
  const detail = errorText(error);
  const code = error instanceof OrkestrError ? error.code : "";
  switch (code) {
    case "network_off":
      return {
        title: "This sandbox has no network",
        body: `It was created with network "off", so nothing in it can be reached from outside. Create a sandbox with network "restricted" or "open" to preview its servers. (${detail})`,
      };
    case "sandbox_paused":
      return {
        title: "The sandbox is paused",
        body: `Its servers are frozen. Resume it to preview port ${port}. (${detail})`,
      };
    case "port_not_listening":
      return { title: `Nothing is listening on port ${port}`, body: detail };
    case "plan_limit":
      return { title: "Previews are not included in this plan", body: detail };
    default:
      return { title: `Could not open the preview of port ${port}`, body: detail };
  }
}

/** Port `port` of the sandbox: its URL (protected or public), copy / reload / open, and the iframe. */
export function PreviewViewer({ sandboxId, port }: { sandboxId: string; port: number }) {
  const info = useQuery({ ...previewQueries.describe(sandboxId, port), refetchInterval: DESCRIBE_INTERVAL_MS });
  const token = usePreviewToken(sandboxId);
  const [withoutToken, setWithoutToken] = useState(false);
  const [reloads, setReloads] = useState(0);
  const [showToken, setShowToken] = useState(false);

  if (info.isPending) return <Skeleton className="h-96 w-full" />;
  // A failed re-check keeps the last good description (and the iframe) on screen.
  if (info.data === undefined) {
    const p = previewProblem(info.error, port);
    return (
      <Alert
        variant={
          info.error instanceof OrkestrError && info.error.code === "port_not_listening" ? "warning" : "destructive"
        }
      >
        <AlertTitle>{p.title}</AlertTitle>
        <AlertDescription className="flex flex-col items-start gap-2">
          <p>{p.body}</p>
          <Button size="sm" variant="outline" onClick={() => void info.refetch()}>
            Try again
          </Button>
        </AlertDescription>
      </Alert>
    );
  }

  const data = info.data;
  const url = data.url ?? (data.host ? `https://${data.host}` : null);
  if (!url) {
    return (
      <Alert variant="destructive">
        <AlertTitle>No preview URL</AlertTitle>
        <AlertDescription>
          The API described port {port} without a URL or host, so there is nothing to load.
        </AlertDescription>
      </Alert>
    );
  }
  const protectedUrl = data.auth_required === true;
  const src = protectedUrl ? withPreviewToken(url, token) : url;
  const needsToken = protectedUrl && !token && !withoutToken;

  return (
    <section aria-label={`Preview of port ${port}`} className="flex min-w-0 flex-col gap-3">
      <div className="flex flex-wrap items-center gap-2">
        {protectedUrl ? (
          <Badge variant="outline" className="gap-1" title="preview_auth: requests need the sandbox's preview token">
            <LockIcon className="size-3.5" /> Protected
          </Badge>
        ) : (
          <Badge variant="outline" className="gap-1" title="Anyone with the URL can open it">
            <GlobeIcon className="size-3.5" /> Public
          </Badge>
        )}
        <code data-testid="preview-url" className="min-w-0 flex-1 break-all rounded bg-muted px-2 py-1 text-xs">
          {url}
        </code>
      </div>
      <div className="flex flex-wrap items-center gap-2">
        <CopyButton
          text={url}
          label={
            <>
              <CopyIcon /> Copy URL
            </>
          }
          copiedLabel={
            <>
              <CopyIcon /> Copied
            </>
          }
          announce={{
            title: "Preview URL copied",
            description: protectedUrl ? "It is protected: whoever opens it needs the preview token too." : url,
          }}
        />
        <Button size="sm" variant="outline" onClick={() => setReloads((n) => n + 1)} disabled={needsToken}>
          <RefreshIcon /> Reload
        </Button>
        <Button size="sm" variant="outline" asChild>
          {/* noreferrer: the preview learns nothing about the console; the token (if any) is in the URL for the first hit only. */}
          <a href={src} target="_blank" rel="noopener noreferrer">
            <ExternalLinkIcon /> Open in new tab<span className="sr-only"> (port {port})</span>
          </a>
        </Button>
      </div>

      {protectedUrl && token ? (
        <div className="flex flex-wrap items-center gap-2 text-xs text-muted-foreground">
          <span>Using the preview token</span>
          <code className="rounded bg-muted px-1.5 py-0.5">{showToken ? token : "pvt_••••••••"}</code>
          <Button size="sm" variant="ghost" className="h-6 px-2" onClick={() => setShowToken((s) => !s)}>
            {showToken ? "Hide" : "Show"}
          </Button>
          <CopyButton text={token} label="Copy token" variant="ghost" className="h-6 px-2" />
          <Button size="sm" variant="ghost" className="h-6 px-2" onClick={() => setPreviewToken(sandboxId, null)}>
            Forget token
          </Button>
        </div>
      ) : null}

      {data.listening === false ? (
        <Alert variant="warning" role="status">
          <AlertTitle>Nothing is listening on port {port} right now</AlertTitle>
          <AlertDescription>
            The preview would answer 502 port_not_listening. Start a server on this port (bound to 0.0.0.0 or
            127.0.0.1); this page checks again every {DESCRIBE_INTERVAL_MS / 1000} s and loads it then.
          </AlertDescription>
        </Alert>
      ) : needsToken ? (
        <PreviewTokenPanel sandboxId={sandboxId} port={port} onTryWithout={() => setWithoutToken(true)} />
      ) : (
        <iframe
          key={`${src}#${reloads}`}
          title={`Preview of port ${port}`}
          src={src}
          sandbox={PREVIEW_IFRAME_SANDBOX}
          referrerPolicy="no-referrer"
          // A light frame in both themes, as the page looks opened on its own: most dev pages set no
          // background, and inside the dark console their black text would land on a transparent
          // frame over a dark card. color-scheme: light on the element keeps the frame's own
          // canvas and Chromium's text/plain view light too.
          className="h-[70vh] min-h-96 w-full rounded-md border bg-white [color-scheme:light]"
        />
      )}
    </section>
  );
}

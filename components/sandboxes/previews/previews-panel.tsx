"use client";

import { useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { useEffect, useId, useState, type FormEvent } from "react";
import type { Sandbox } from "../../../lib/orkestr/schemas/sandboxes";
import { AUTO_SCANS, parsePort, previewQueries, SCAN_INTERVAL_MS } from "../../../lib/queries/previews";
import { cn } from "../../../lib/utils";
import { EmptyState } from "../../layout/empty-state";
import { Alert, AlertDescription, AlertTitle } from "../../ui/alert";
import { Button } from "../../ui/button";
import { ReadOnlyNote } from "../../ui/read-only-note";
import { useSandboxAccess } from "../detail/use-sandbox-access";
import { Input } from "../../ui/input";
import { Label } from "../../ui/label";
import { Skeleton } from "../../ui/skeleton";
import { GlobeIcon, RefreshIcon } from "../files/icons";
import { errorText } from "../../../lib/orkestr/errors";
import { PreviewViewer } from "./preview-viewer";
import { useTeamRouter } from "../../layout/team-link";

/**
 * The Previews tab of a running sandbox: the ports its processes listen on (detected by a scan, see
 * lib/queries/sandbox-previews.ts), a field to type any port, and the chosen port's preview. The
 * chosen port is in the URL (?port=), so a reload or a shared link shows the same preview.
 */
export function PreviewsPanel({ sandbox }: { sandbox: Sandbox }) {
  const router = useTeamRouter();
  const pathname = usePathname();
  const search = useSearchParams();
  const port = parsePort(search.get("port") ?? "");
  const [typed, setTyped] = useState(port ? String(port) : "");
  const [typedError, setTypedError] = useState<string | null>(null);
  const inputId = useId();
  // Automatic scans run for a while after the tab opens or "Scan" (each scan is an exec).
  const [autoScanning, setAutoScanning] = useState(true);
  const [autoRound, setAutoRound] = useState(0);
  useEffect(() => {
    const timer = setTimeout(() => setAutoScanning(false), AUTO_SCANS * SCAN_INTERVAL_MS);
    return () => clearTimeout(timer);
  }, [autoRound]);
  const networkOff = sandbox.network === "off";
  // A scan runs a command in the sandbox (sandboxes.write): a role without it types the port.
  const { canChange, whyNot } = useSandboxAccess();

  const scan = useQuery({
    ...previewQueries.scan(sandbox.id),
    enabled: !networkOff && canChange,
    refetchInterval: autoScanning ? SCAN_INTERVAL_MS : false,
    refetchOnWindowFocus: false,
  });

  // A port chosen that the last scan did not list: the user knows something listens there (a
  // server started a moment after the tab's first scan), so look again now rather than in 15 s.
  const scanned = scan.data;
  const refetchScan = scan.refetch;
  useEffect(() => {
    if (port !== null && scanned && !scanned.some((p) => p.port === port)) void refetchScan();
    // Only a change of port asks again; a scan's own result must not start another one.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [port]);

  const choose = (p: number | null) => {
    const params = new URLSearchParams(search.toString());
    if (p === null) params.delete("port");
    else params.set("port", String(p));
    router.push(`${pathname}?${params.toString()}`, { scroll: false });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const p = parsePort(typed);
    if (p === null) return setTypedError("Enter a port from 1 to 65535.");
    setTypedError(null);
    choose(p);
  };

  if (networkOff) {
    return (
      <EmptyState
        icon={<GlobeIcon />}
        title="This sandbox has no network"
        description={
          <>
            It was created with <span className="font-mono">network: &quot;off&quot;</span>, so servers in it cannot be
            reached from outside and it has no preview URLs. Create a sandbox with network{" "}
            <span className="font-mono">restricted</span> or <span className="font-mono">open</span> to preview its
            ports.
          </>
        }
      />
    );
  }

  const ports = scan.data ?? [];

  return (
    <div className="grid gap-4 lg:grid-cols-[16rem_minmax(0,1fr)]">
      <aside aria-labelledby="ports-heading" className="flex flex-col gap-4 self-start rounded-lg border bg-card p-4">
        <div className="flex items-center justify-between gap-2">
          <h3 id="ports-heading" className="text-sm font-semibold">
            Listening ports
          </h3>
          {canChange ? (
            <Button
              size="sm"
              variant="ghost"
              onClick={() => {
                setAutoScanning(true);
                setAutoRound((r) => r + 1);
                void scan.refetch();
              }}
              disabled={scan.isFetching}
              aria-label="Scan again for listening ports"
            >
              <RefreshIcon className={cn(scan.isFetching && "animate-spin")} /> Scan
            </Button>
          ) : null}
        </div>
        {!canChange ? (
          <ReadOnlyNote>
            {whyNot("scan for listening ports (each scan runs a command in the sandbox)")} Type a port below to preview
            it.
          </ReadOnlyNote>
        ) : scan.isPending ? (
          <div className="flex flex-col gap-2" aria-busy="true" aria-label="Looking for listening ports">
            <Skeleton className="h-8 w-full" />
            <Skeleton className="h-8 w-full" />
          </div>
        ) : scan.isError && !scan.data ? (
          <Alert variant="destructive">
            <AlertTitle>Could not look for ports</AlertTitle>
            <AlertDescription>{errorText(scan.error)} Type a port below instead.</AlertDescription>
          </Alert>
        ) : ports.length === 0 ? (
          <p data-testid="ports-empty" className="text-sm text-muted-foreground">
            Nothing listens yet. Start a server in the sandbox, for example{" "}
            <code className="rounded bg-muted px-1 font-mono text-xs">python3 -m http.server 8000</code>
            {autoScanning ? `; it shows up here within ${SCAN_INTERVAL_MS / 1000} s.` : ", then scan again."}
          </p>
        ) : (
          <ul className="flex flex-col gap-1" aria-label="Detected ports">
            {ports.map((p) => (
              <li key={p.port}>
                <button
                  type="button"
                  onClick={() => {
                    setTyped(String(p.port));
                    choose(p.port);
                  }}
                  aria-pressed={port === p.port}
                  className={cn(
                    "flex w-full items-center justify-between gap-2 rounded-md px-3 py-2 text-left text-sm hover:bg-accent focus-visible:outline-2 focus-visible:outline-ring",
                    port === p.port && "bg-secondary font-semibold",
                  )}
                >
                  <span className="font-mono">{p.port}</span>
                  <span className="text-xs font-normal text-muted-foreground">
                    {p.loopbackOnly ? "127.0.0.1" : "all addresses"}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
        {canChange ? (
          <p className="text-xs text-muted-foreground">
            {autoScanning
              ? `Scanned every ${SCAN_INTERVAL_MS / 1000} s while this tab is open and visible (each scan runs one command in the sandbox).`
              : "Automatic scanning paused after 5 minutes; Scan looks again and resumes it."}
          </p>
        ) : null}
        <form onSubmit={submit} className="flex flex-col gap-2 border-t pt-4" noValidate>
          <Label htmlFor={inputId}>Port</Label>
          <div className="flex gap-2">
            <Input
              id={inputId}
              inputMode="numeric"
              placeholder="3000"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              aria-invalid={typedError ? true : undefined}
              aria-describedby={typedError ? `${inputId}-error` : undefined}
            />
            <Button type="submit" variant="outline">
              Preview
            </Button>
          </div>
          {typedError ? (
            <p id={`${inputId}-error`} className="text-sm text-destructive">
              {typedError}
            </p>
          ) : null}
        </form>
      </aside>

      <div className="min-w-0 rounded-lg border bg-card p-4">
        {port === null ? (
          <EmptyState
            className="min-h-80 border-0"
            icon={<GlobeIcon />}
            title="Choose a port to preview"
            description="Pick a listening port on the left or type one. The preview opens here in a sandboxed frame, with its URL to copy or open in a new tab."
          />
        ) : (
          <PreviewViewer key={port} sandboxId={sandbox.id} port={port} />
        )}
      </div>
    </div>
  );
}

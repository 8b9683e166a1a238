"use client";

import { formatDuration, formatUtc, toMs } from "../../lib/format";
import { newSandboxWithVolumeHref } from "../../lib/resource-links";
import { usePermission } from "../layout/permissions";
import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { cn } from "../../lib/utils";
import { useCountdown } from "../sandboxes/create/use-countdown";
import { CopyButton, CopyIcon } from "../ui/copy-button";
import { HolderLink } from "./holder-link";
import { RowActions } from "./row-actions";
import { UsageBar } from "./usage-bar";
import type { VolumeActionKind } from "./volume-action-dialog";
import { lifetimeLabel } from "./volume-model";
import { VolumeStatusBadge } from "./volume-status";
import { TableScroll } from "../ui/table";

const ACTIONS: { kind: VolumeActionKind; label: string }[] = [
  { kind: "grow", label: "Grow…" },
  { kind: "lifetime", label: "Set lifetime…" },
  { kind: "move", label: "Move to another region…" },
  { kind: "delete", label: "Delete…" },
];

/** The volumes as a table: one row each, its actions at the end (dialogs open from them). */
export function VolumeTable({
  volumes,
  canWrite,
  onAction,
  highlight,
}: {
  volumes: readonly Volume[];
  canWrite: boolean;
  onAction: (kind: VolumeActionKind, volume: Volume) => void;
  /** A volume id to mark (the Files tab links here with ?volume=). */
  highlight: string | null;
}) {
  // "New sandbox with it" creates a sandbox (sandboxes.write).
  const canCreateSandbox = usePermission("sandboxes.write");
  return (
    <TableScroll className="rounded-lg border">
      <table className="w-full text-sm">
        <caption className="sr-only">Your volumes, newest first</caption>
        <thead className="border-b bg-muted/40 text-left text-xs text-muted-foreground">
          <tr>
            <th scope="col" className="px-3 py-2 font-medium">
              Name
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Region
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Used / size
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Status
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Attached to
            </th>
            <th scope="col" className="px-3 py-2 font-medium">
              Lifetime
            </th>
            {canWrite ? (
              <th scope="col" className="px-3 py-2 font-medium">
                <span className="sr-only">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {volumes.map((v) => {
            const name = v.name ?? v.id;
            return (
              <tr
                key={v.id}
                data-testid="volume-row"
                data-name={name}
                aria-current={highlight === v.id || highlight === v.name ? "true" : undefined}
                className={cn(
                  "border-b last:border-b-0",
                  (highlight === v.id || highlight === v.name) && "bg-primary/5",
                )}
              >
                <th scope="row" className="px-3 py-2 text-left font-normal">
                  <div className="flex flex-col">
                    <span className="font-medium">{name}</span>
                    <span className="flex items-center gap-1 font-mono text-xs text-muted-foreground">
                      <span className="max-w-40 truncate [direction:rtl]" title={v.id}>
                        {v.id}
                      </span>
                      <CopyButton
                        text={v.id}
                        label={<CopyIcon />}
                        copiedLabel={<CopyIcon />}
                        variant="ghost"
                        aria-label={`Copy id ${v.id}`}
                        title="Copy id"
                        className="size-6 shrink-0 p-0 text-muted-foreground [&_svg]:size-3.5"
                      />
                    </span>
                  </div>
                </th>
                <td className="px-3 py-2 font-mono text-xs">{v.region ?? "—"}</td>
                <td className="px-3 py-2">
                  <UsageBar volume={v} />
                </td>
                <td className="px-3 py-2">
                  <VolumeStatusBadge status={v.status ?? "unknown"} />
                </td>
                <td className="px-3 py-2 text-xs">
                  {v.attached_sandbox_id ? (
                    <HolderLink id={v.attached_sandbox_id} compact />
                  ) : (
                    <span className="text-muted-foreground">—</span>
                  )}
                </td>
                <td className="px-3 py-2 text-xs whitespace-nowrap">
                  <LifetimeCell volume={v} />
                </td>
                {canWrite ? (
                  <td className="px-3 py-2 text-right">
                    <RowActions
                      name={name}
                      actions={[
                        ...(v.attached_sandbox_id || !canCreateSandbox
                          ? []
                          : [{ label: "New sandbox with it", href: newSandboxWithVolumeHref(v.id) }]),
                        ...ACTIONS.map((a) => ({
                          label: a.label,
                          destructive: a.kind === "delete",
                          onSelect: () => onAction(a.kind, v),
                        })),
                      ]}
                    />
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}

/**
 * "7 days" and the live countdown to the deadline (the page's one clock, through the create form's
 * useCountdown); what a deadline that passed while the volume was held means.
 */
function LifetimeCell({ volume }: { volume: Volume }) {
  const label = lifetimeLabel(volume);
  const at = toMs(volume.expires_at);
  const left = useCountdown(label ? at : null);
  if (!label) return <span className="text-muted-foreground">Until deleted</span>;
  return (
    <div className="flex flex-col" data-testid="volume-lifetime">
      <span>{label}</span>
      <span className="text-muted-foreground">
        {at === null || left === null ? (
          "…"
        ) : left > 0 ? (
          <time dateTime={new Date(at).toISOString()} title={`Deleted at ${formatUtc(at)} unless held then`}>
            expires in {formatDuration(left * 1000)}
          </time>
        ) : volume.attached_sandbox_id ? (
          "over: deleted once detached"
        ) : (
          "over: being deleted"
        )}
      </span>
    </div>
  );
}

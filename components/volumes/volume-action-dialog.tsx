"use client";

import type { Volume } from "../../lib/orkestr/schemas/volumes";
import { Dialog } from "../ui/dialog";
import { DeleteForm } from "./delete-volume-dialog";
import { GrowForm } from "./grow-dialog";
import { LifetimeForm } from "./lifetime-dialog";
import { MoveForm } from "./move-dialog";

export type VolumeActionKind = "grow" | "lifetime" | "move" | "delete";

export interface VolumeAction {
  kind: VolumeActionKind;
  volume: Volume;
}

const TITLE: Record<VolumeActionKind, string> = {
  grow: "Grow volume",
  lifetime: "Max lifetime",
  move: "Move to another region",
  delete: "Delete this volume?",
};

/** The dialog of one row action (loaded when the first one is opened). */
export function VolumeActionDialog({
  action,
  onClose,
  maxGb,
  regions,
  baseUrl,
}: {
  action: VolumeAction | null;
  onClose: () => void;
  maxGb: number;
  regions: readonly string[];
  baseUrl?: string;
}) {
  const volume = action?.volume;
  const name = volume ? (volume.name ?? volume.id) : "";
  return (
    <Dialog
      open={action !== null}
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
      title={action ? `${TITLE[action.kind]}${action.kind === "delete" ? "" : `: ${name}`}` : ""}
      className="max-w-xl"
    >
      {action && volume ? (
        action.kind === "grow" ? (
          <GrowForm key={volume.id} volume={volume} maxGb={maxGb} baseUrl={baseUrl} onDone={onClose} />
        ) : action.kind === "lifetime" ? (
          <LifetimeForm key={volume.id} volume={volume} baseUrl={baseUrl} onDone={onClose} />
        ) : action.kind === "move" ? (
          <MoveForm key={volume.id} volume={volume} regions={regions} baseUrl={baseUrl} onDone={onClose} />
        ) : (
          <DeleteForm key={volume.id} volume={volume} baseUrl={baseUrl} onDone={onClose} />
        )
      ) : null}
    </Dialog>
  );
}

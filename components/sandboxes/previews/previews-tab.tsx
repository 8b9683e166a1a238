"use client";

import { Suspense } from "react";
import { Skeleton } from "../../ui/skeleton";
import { SandboxStateGate } from "../files/sandbox-state-gate";
import { PreviewsPanel } from "./previews-panel";

/** The Previews tab's client root: the sandbox must run, then the ports and the preview (?port=). */
export function PreviewsTab({ sandboxId }: { sandboxId: string }) {
  return (
    <SandboxStateGate sandboxId={sandboxId} what="previews">
      {(sandbox) => (
        <Suspense fallback={<Skeleton className="h-64 w-full" />}>
          <PreviewsPanel sandbox={sandbox} />
        </Suspense>
      )}
    </SandboxStateGate>
  );
}

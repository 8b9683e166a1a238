"use client";

import { Suspense } from "react";
import { Skeleton } from "../../ui/skeleton";
import { FileBrowser } from "./file-browser";
import { SandboxStateGate } from "./sandbox-state-gate";

/** The Files tab's client root: the sandbox must run, then the browser (which reads ?path=&file=). */
export function FilesTab({ sandboxId }: { sandboxId: string }) {
  return (
    <SandboxStateGate sandboxId={sandboxId} what="files">
      {(sandbox) => (
        <Suspense fallback={<Skeleton className="h-64 w-full" />}>
          <FileBrowser sandbox={sandbox} />
        </Suspense>
      )}
    </SandboxStateGate>
  );
}

import type { Metadata } from "next";
import { TabSection } from "../../../../../components/sandboxes/detail/tab-section";
import { FilesTab } from "../../../../../components/sandboxes/files/files-tab";

export const metadata: Metadata = { title: "Files" };

// Sandbox → Files: browse /workspace (and /persist with a volume), view, edit, upload, download,
// delete. Everything is read live in the browser through /api/v1 (TanStack Query): file trees
// change under the user's feet, and the sandbox must be running to be read at all.
export default async function SandboxFilesPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <TabSection
      title="Files"
      intro={
        <>
          <span className="font-mono">/workspace</span> is scratch space, gone when the sandbox terminates; an attached
          volume is at <span className="font-mono">/persist</span>.
        </>
      }
    >
      <FilesTab sandboxId={decodeURIComponent(id)} />
    </TabSection>
  );
}

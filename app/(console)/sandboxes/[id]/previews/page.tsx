import type { Metadata } from "next";
import { TabSection } from "../../../../../components/sandboxes/detail/tab-section";
import { PreviewsTab } from "../../../../../components/sandboxes/previews/previews-tab";

export const metadata: Metadata = { title: "Previews" };

// Sandbox → Previews: the ports its servers listen on, and each one's preview URL in a sandboxed
// iframe. Live in the browser (TanStack Query through /api/v1): ports come and go with processes.
export default async function SandboxPreviewsPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return (
    <TabSection
      title="Previews"
      intro={
        <>
          Every port a server listens on inside the sandbox has its own URL. Protected sandboxes (
          <span className="font-mono">preview_auth</span>) need their preview token.
        </>
      }
    >
      <PreviewsTab sandboxId={decodeURIComponent(id)} />
    </TabSection>
  );
}

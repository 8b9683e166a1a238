import type { Metadata } from "next";
import { TabSection } from "../../../../../components/sandboxes/detail/tab-section";
import { TerminalGate } from "../../../../../components/sandboxes/terminal/terminal-gate";

export const metadata: Metadata = { title: "Terminal" };

// Sandbox → Terminal: shells inside the sandbox (the detail layout above holds its h1 and tabs).
// `?mode=line` forces line mode (streaming exec) even where PTYs exist.
export default async function SandboxTerminalPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ mode?: string | string[] }>;
}) {
  const { id } = await params;
  const { mode } = await searchParams;
  return (
    <TabSection
      title="Terminal"
      intro="Interactive shells (a PTY over a WebSocket) or line mode; each tab is its own process, ended when you close it."
    >
      <TerminalGate sandboxId={decodeURIComponent(id)} forceLine={mode === "line"} />
    </TabSection>
  );
}

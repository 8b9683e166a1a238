import { SandboxOverview } from "../../../../components/sandboxes/detail/sandbox-overview";

// Overview: the layout has read the sandbox (404 for unknown ids); this tab renders its fields,
// metadata, settings and the live charts (recharts loaded on demand, on this page only).
export default function SandboxOverviewPage() {
  return <SandboxOverview />;
}

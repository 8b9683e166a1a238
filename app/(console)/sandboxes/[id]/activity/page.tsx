import { ActivityTimeline } from "../../../../../components/sandboxes/detail/activity-timeline";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return { title: `Activity · ${id}` };
}

// Activity: the sandbox's timeline (lifecycle, commands, file writes), newest first and live.
export default function SandboxActivityPage() {
  return <ActivityTimeline />;
}

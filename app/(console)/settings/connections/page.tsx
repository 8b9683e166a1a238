import type { Metadata } from "next";
import { NotBuiltYet } from "../../../../components/layout/not-built-yet";

export const metadata: Metadata = { title: "Connections" };

// Placeholder: the token vault (named orkestr connections, one active, "Use the local engine") is issue 4.
export default function ConnectionsPage() {
  return (
    <NotBuiltYet
      href="/settings"
      title="Connections"
      description="The orkestr APIs this console talks to, with their tokens kept server-side."
      arrivesWith="issue 4"
    />
  );
}

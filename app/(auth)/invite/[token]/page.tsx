import type { Metadata } from "next";
import { InviteAccept } from "../../../../components/team/invite-accept";

// The invitation link's page (/invite/<token>): public, outside the console. It asks the API what
// the link is for (POST /api/invitations/lookup) and offers what fits: create an account, sign in
// first, or accept as the signed-in user; a used, revoked or expired link says so.
export const metadata: Metadata = {
  title: "Invitation",
  // The token is in this page's URL: never send it on as a Referer.
  referrer: "no-referrer",
  robots: { index: false, follow: false },
};

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return <InviteAccept token={token} />;
}

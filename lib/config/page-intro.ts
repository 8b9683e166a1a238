import { consoleNavItems, type NavItem } from "./nav";

// What each console page says under its title, and, while it is an empty state, which issue builds
// it (drop `arrivesWith` when the page ships). Apart from ./nav.ts on purpose: the page headers that
// show these are rendered on the server, so no page's first load carries them.

interface PageIntro {
  /** One line shown under the page title. */
  description: string;
  /** The issue that builds this page, while it is an empty state. */
  arrivesWith?: string;
}

const INTROS: Record<NavItem["href"], PageIntro> = {
  "/sandboxes": {
    description: "Create, run, pause, snapshot and fork sandboxes.",
  },
  "/volumes": {
    description: "Persistent storage that outlives a sandbox.",
  },
  "/snapshots": {
    description: "Saved sandbox states to restore or fork from.",
  },
  "/templates": {
    description: "Base images and build recipes for new sandboxes.",
  },
  "/webhooks": {
    description: "Signed notifications about sandbox lifecycle events.",
  },
  "/events": {
    description: "Webhook deliveries Baton received and verified, live.",
  },
  "/limits": {
    description: "Your plan's sizes, caps and budgets, and what is used of each.",
  },
  "/usage": {
    description:
      "What your sandboxes cost per day, member and sandbox, with the month's run-rate and forecast (days in UTC).",
  },
  "/team": {
    description: "Members, roles and invitations.",
  },
  "/audit": {
    description: "Who did what in this team, when and from where, with the result.",
  },
  "/settings": {
    description: "orkestr connections and console preferences.",
  },
};

/** The nav entry for an href that must exist, with its page's description (pages' headers and empty states). */
export function navItem(href: NavItem["href"]): NavItem & PageIntro {
  const item = consoleNavItems.find((entry) => entry.href === href);
  const intro = INTROS[href];
  if (!item || !intro) throw new Error(`no nav entry for ${href}`);
  return { ...item, ...intro };
}

/**
 * The console's navigation as data: the sidebar (and later the command palette) render this list.
 * `arrivesWith` is honest bookkeeping for pages that are still empty states; drop it when a page ships.
 */
export type NavIcon =
  | "sandboxes"
  | "volumes"
  | "snapshots"
  | "templates"
  | "webhooks"
  | "events"
  | "limits"
  | "usage"
  | "team"
  | "settings";

export interface NavItem {
  title: string;
  href: `/${string}`;
  icon: NavIcon;
  /** One line shown under the page title. */
  description: string;
  /** The issue that builds this page, while it is an empty state. */
  arrivesWith?: string;
}

export interface NavSection {
  /** Visible group label; also the accessible name of the group. */
  title: string;
  items: readonly NavItem[];
}

export const consoleNav: readonly NavSection[] = [
  {
    title: "Resources",
    items: [
      {
        title: "Sandboxes",
        href: "/sandboxes",
        icon: "sandboxes",
        description: "Create, run, pause, snapshot and fork sandboxes.",
      },
      {
        title: "Volumes",
        href: "/volumes",
        icon: "volumes",
        description: "Persistent storage that outlives a sandbox.",
      },
      {
        title: "Snapshots",
        href: "/snapshots",
        icon: "snapshots",
        description: "Saved sandbox states to restore or fork from.",
      },
      {
        title: "Templates",
        href: "/templates",
        icon: "templates",
        description: "Base images and build recipes for new sandboxes.",
      },
      {
        title: "Webhooks",
        href: "/webhooks",
        icon: "webhooks",
        description: "Signed notifications about sandbox lifecycle events.",
      },
      {
        title: "Events",
        href: "/events",
        icon: "events",
        description: "Webhook deliveries Baton received and verified, live.",
      },
    ],
  },
  {
    title: "Account",
    items: [
      {
        title: "Limits",
        href: "/limits",
        icon: "limits",
        description: "Your plan's sizes, caps and budgets, and what is used of each.",
      },
      {
        title: "Usage",
        href: "/usage",
        icon: "usage",
        description: "Compute and memory metered against your plan.",
        arrivesWith: "issue 4 or later",
      },
      {
        title: "Team",
        href: "/team",
        icon: "team",
        description: "Members, roles and invitations.",
        arrivesWith: "issue 4 or later",
      },
      {
        title: "Settings",
        href: "/settings",
        icon: "settings",
        description: "orkestr connections and console preferences.",
        arrivesWith: "issue 4 or later",
      },
    ],
  },
];

export const consoleNavItems: readonly NavItem[] = consoleNav.flatMap((section) => section.items);

/** The nav entry for a path, matching nested routes (/sandboxes/abc → Sandboxes). */
export function navItemFor(pathname: string): NavItem | undefined {
  return consoleNavItems.find((item) => pathname === item.href || pathname.startsWith(`${item.href}/`));
}

/** The nav entry for an href that must exist (pages use this for their header and empty state). */
export function navItem(href: NavItem["href"]): NavItem {
  const item = consoleNavItems.find((entry) => entry.href === href);
  if (!item) throw new Error(`no nav entry for ${href}`);
  return item;
}

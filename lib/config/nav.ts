/**
 * The console's navigation as data: the sidebar (server-rendered, components/layout/sidebar.tsx) and
 * the command palette (loaded on first use) render this list. Only what they show is here; each
 * page's one-line description is in lib/config/page-intro.ts, which only server-rendered page headers
 * read.
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
  | "settings"
  | "audit";

export interface NavItem {
  title: string;
  href: `/${string}`;
  icon: NavIcon;
  /**
   * Shown only to roles with this permission in the acting team (the sidebar filters on the server,
   * the command palette with components/layout/nav-permissions.tsx).
   */
  perm?: "audit.read";
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
      },
      {
        title: "Volumes",
        href: "/volumes",
        icon: "volumes",
      },
      {
        title: "Snapshots",
        href: "/snapshots",
        icon: "snapshots",
      },
      {
        title: "Templates",
        href: "/templates",
        icon: "templates",
      },
      {
        title: "Webhooks",
        href: "/webhooks",
        icon: "webhooks",
      },
      {
        title: "Events",
        href: "/events",
        icon: "events",
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
      },
      {
        title: "Usage",
        href: "/usage",
        icon: "usage",
      },
      {
        title: "Team",
        href: "/team",
        icon: "team",
      },
      {
        title: "Audit log",
        href: "/audit",
        icon: "audit",
        perm: "audit.read",
      },
      {
        title: "Settings",
        href: "/settings",
        icon: "settings",
      },
    ],
  },
];

export const consoleNavItems: readonly NavItem[] = consoleNav.flatMap((section) => section.items);

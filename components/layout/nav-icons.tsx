// The console nav's icons, one per section (lib/config/nav.ts `icon`), and Baton's mark. Rendered on
// the server with the nav and the brand (components/layout/sidebar.tsx), so their paths are not in
// every page's JavaScript; a client component that shows one (an empty state) loads them with itself.
import type { ReactNode } from "react";
import type { NavIcon as NavIconName } from "../../lib/config/nav";
import { Icon, type IconProps } from "../ui/icon";

const navPaths: Record<NavIconName, ReactNode> = {
  // a cube
  sandboxes: (
    <>
      <path d="M21 8 12 3 3 8v8l9 5 9-5z" />
      <path d="m3 8 9 5 9-5M12 13v8" />
    </>
  ),
  // a disk cylinder
  volumes: (
    <>
      <ellipse cx="12" cy="5.5" rx="8" ry="2.5" />
      <path d="M4 5.5v13c0 1.4 3.6 2.5 8 2.5s8-1.1 8-2.5v-13" />
      <path d="M4 12c0 1.4 3.6 2.5 8 2.5s8-1.1 8-2.5" />
    </>
  ),
  // a camera
  snapshots: (
    <>
      <path d="M4 7h3l2-3h6l2 3h3a1 1 0 0 1 1 1v11a1 1 0 0 1-1 1H4a1 1 0 0 1-1-1V8a1 1 0 0 1 1-1z" />
      <circle cx="12" cy="13" r="3.5" />
    </>
  ),
  // a layout template
  templates: (
    <>
      <rect x="3" y="3" width="18" height="7" rx="1" />
      <rect x="3" y="14" width="8" height="7" rx="1" />
      <rect x="15" y="14" width="6" height="7" rx="1" />
    </>
  ),
  // three linked nodes
  webhooks: (
    <>
      <circle cx="12" cy="5" r="2.5" />
      <circle cx="5" cy="18" r="2.5" />
      <circle cx="19" cy="18" r="2.5" />
      <path d="m10.8 7.2-4.6 8.6M13.2 7.2l4.6 8.6M7.5 18h9" />
    </>
  ),
  // a pulse line
  events: <path d="M3 12h4l3-8 4 16 3-8h4" />,
  // a gauge
  limits: (
    <>
      <path d="M4 18a8 8 0 1 1 16 0" />
      <path d="m12 18 4-6" />
    </>
  ),
  // a bar chart
  usage: <path d="M4 20V10M10 20V4M16 20v-7M22 20H2" />,
  // two people
  team: (
    <>
      <circle cx="9" cy="8" r="3.5" />
      <path d="M2.5 20a6.5 6.5 0 0 1 13 0" />
      <path d="M16 4.6a3.5 3.5 0 0 1 0 6.8M18.5 14.5a6.5 6.5 0 0 1 3 5.5" />
    </>
  ),
  // a list with a check (the audit log)
  audit: (
    <>
      <path d="M9 6h11M9 12h11M9 18h11" />
      <path d="m3 6 1.5 1.5L7 5M3 12l1.5 1.5L7 11M3 18l1.5 1.5L7 17" />
    </>
  ),
  // sliders
  settings: (
    <>
      <path d="M4 6h9M17 6h3M4 12h3M11 12h9M4 18h11M19 18h1" />
      <circle cx="15" cy="6" r="2" />
      <circle cx="9" cy="12" r="2" />
      <circle cx="17" cy="18" r="2" />
    </>
  ),
};

export function NavIcon({ name, ...props }: IconProps & { name: NavIconName }) {
  return <Icon {...props}>{navPaths[name]}</Icon>;
}

export function BatonMark(props: IconProps) {
  return (
    <Icon strokeWidth={2} {...props}>
      <path d="M5 19 19 5" />
      <circle cx="5" cy="19" r="2" />
      <path d="M15 5h4v4" />
    </Icon>
  );
}

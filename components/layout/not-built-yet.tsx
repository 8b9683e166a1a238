import type { ReactNode } from "react";
import type { NavItem } from "../../lib/config/nav";
import { navItem } from "../../lib/config/page-intro";
import { EmptyState } from "./empty-state";
import { NavIcon } from "./nav-icons";
import { PageHeader } from "./page-header";

/** A console page that is not built yet: its title from the nav data and an honest empty state. */
export function NotBuiltYet({
  href,
  title,
  description,
  arrivesWith,
  action,
}: {
  href: NavItem["href"];
  title?: string;
  description?: string;
  arrivesWith?: string;
  action?: ReactNode;
}) {
  const item = navItem(href);
  const when = arrivesWith ?? item.arrivesWith;
  return (
    <>
      <PageHeader title={title ?? item.title} description={description ?? item.description} />
      <EmptyState
        icon={<NavIcon name={item.icon} />}
        title={when ? `Not built yet: arrives with ${when}` : "Not built yet"}
        description="Until then this page stays empty rather than showing sample data."
        action={action}
      />
    </>
  );
}

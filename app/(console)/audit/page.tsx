import type { Metadata } from "next";
import { AuditLog } from "../../../components/audit/audit-log";
import { Forbidden } from "../../../components/layout/forbidden";
import { PageHeader } from "../../../components/layout/page-header";
import { navItem } from "../../../lib/config/page-intro";
import { requirePermission } from "../../../lib/server/auth";
import { can } from "../../../lib/server/rbac";

export const metadata: Metadata = { title: "Audit log" };

/**
 * The team's audit log (admins and owners: audit.read, what GET /api/audit requires): filters and a
 * query box kept in sync (and in the URL), paging, the export of exactly the filtered rows, and for
 * owners (audit.manage) the retention and SIEM stream settings.
 */
export default async function AuditPage() {
  const item = navItem("/audit");
  const access = await requirePermission("audit.read");
  if (!access.ok) return <Forbidden title={item.title} detail={access.detail} />;
  return (
    <>
      <PageHeader title={item.title} description={item.description} />
      <AuditLog teamName={access.team.team.name} canManage={can(access.team.role, "audit.manage")} />
    </>
  );
}

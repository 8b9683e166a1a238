"use client";

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Command } from "cmdk";
import { usePathname } from "next/navigation";
import { useMemo, useState } from "react";
import { CREATE_TEAM_EVENT, type TeamOption } from "../teams/team-switcher";
import { switchTeam } from "../teams/team-switcher-panel";
import { consoleNavItems } from "../../lib/config/nav";
import type { Sandbox } from "../../lib/orkestr/schemas/sandboxes";
import { useLifecycleAction } from "../../lib/queries/sandbox-lifecycle";
import { sandboxKeys, sandboxQueries } from "../../lib/queries/sandboxes";
import { Dialog } from "../ui/dialog";
import { allowsAction } from "../../lib/sandbox-status";
import { sandboxHref } from "../../lib/links";
import { useNavPermissions } from "../layout/nav-permissions";
import { usePermission } from "../layout/permissions";
import { useTeamRouter } from "../layout/team-link";

/** Most sandbox ids offered at once (the list cache may hold thousands). */
const MAX_SANDBOXES = 12;
const ID_PATTERN = /^[a-z]+_[A-Za-z0-9]{6,}$/;

/** The sandbox whose page is open, from the path (/sandboxes/<id>/…; not /sandboxes/new). */
export function currentSandboxId(pathname: string): string | null {
  const m = /^\/sandboxes\/([^/]+)/.exec(pathname);
  if (!m || m[1] === "new") return null;
  return decodeURIComponent(m[1]!);
}

/** Every sandbox any cached list holds (the list page's infinite pages or a plain page). */
function cachedSandboxes(lists: [unknown, unknown][]): Sandbox[] {
  const byId = new Map<string, Sandbox>();
  for (const [, data] of lists) {
    const d = data as { pages?: { items?: Sandbox[] }[]; items?: Sandbox[] } | undefined;
    for (const page of d?.pages ?? (d?.items ? [d] : []))
      for (const s of page.items ?? []) if (!byId.has(s.id)) byId.set(s.id, s);
  }
  return [...byId.values()];
}

const itemClass =
  "flex cursor-pointer items-center justify-between gap-3 rounded-md px-3 py-2 text-sm aria-selected:bg-accent aria-selected:text-accent-foreground data-[disabled=true]:opacity-50";
const groupClass =
  "[&_[cmdk-group-heading]]:px-3 [&_[cmdk-group-heading]]:pt-3 [&_[cmdk-group-heading]]:pb-1 [&_[cmdk-group-heading]]:text-xs [&_[cmdk-group-heading]]:font-medium [&_[cmdk-group-heading]]:text-muted-foreground";

/**
 * The command palette: jump to a sandbox by id, create one, pause or resume the one whose page is
 * open, go to any console page. Filtering is done here (not by cmdk) so thousands of cached
 * sandboxes stay cheap to search.
 */
export function CommandPalette({
  open,
  onOpenChange,
  onShowShortcuts,
  teams = [],
  activeSlug = null,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onShowShortcuts: () => void;
  teams?: TeamOption[];
  activeSlug?: string | null;
}) {
  const router = useTeamRouter();
  const pathname = usePathname();
  const queryClient = useQueryClient();
  const [search, setSearch] = useState("");
  const allowedPages = useNavPermissions();
  const needle = search.trim().toLowerCase();
  const currentId = currentSandboxId(pathname);

  // The newest sandboxes, for when no list has been visited yet in this tab.
  const recent = useQuery({ ...sandboxQueries.list({ limit: "50" }), enabled: open });
  const current = useQuery({ ...sandboxQueries.detail(currentId ?? ""), enabled: open && currentId !== null });

  const sandboxes = useMemo(() => {
    if (!open) return [];
    const all = cachedSandboxes(queryClient.getQueriesData({ queryKey: sandboxKeys.lists() }));
    return all.filter((s) => !needle || s.id.toLowerCase().includes(needle)).slice(0, MAX_SANDBOXES);
    // recent.data: re-read the cache when the fallback page arrives.
  }, [open, needle, queryClient, recent.data]); // eslint-disable-line react-hooks/exhaustive-deps

  const close = () => {
    onOpenChange(false);
    setSearch("");
  };
  const go = (href: string) => {
    close();
    router.push(href);
  };

  const lifecycleAction = useLifecycleAction();
  const canChange = usePermission("sandboxes.write");
  const lifecycle = (action: "pause" | "resume", id: string) => {
    close();
    lifecycleAction.mutate({ action, id });
  };

  const matches = (text: string) => !needle || text.toLowerCase().includes(needle);
  const typedId =
    ID_PATTERN.test(search.trim()) && !sandboxes.some((s) => s.id === search.trim()) ? search.trim() : null;
  const status = current.data?.status;
  // A role that may not change sandboxes is not offered create, pause or resume (the API refuses them).
  const actions = [
    ...(canChange
      ? [{ id: "create", label: "Create sandbox", hint: "/sandboxes/new", run: () => go("/sandboxes/new") }]
      : []),
    ...(canChange && currentId && (status === undefined || allowsAction(status, "pause"))
      ? [{ id: "pause", label: "Pause this sandbox", hint: currentId, run: () => lifecycle("pause", currentId) }]
      : []),
    ...(canChange && currentId && (status === undefined || allowsAction(status, "resume"))
      ? [
          {
            id: "resume",
            label: "Resume this sandbox",
            hint: currentId,
            run: () => lifecycle("resume", currentId),
          },
        ]
      : []),
    { id: "shortcuts", label: "Keyboard shortcuts", hint: "?", run: () => (close(), onShowShortcuts()) },
  ].filter((a) => matches(`${a.label} ${a.hint}`));
  const pages = consoleNavItems.filter(
    (n) => (!n.perm || allowedPages.includes(n.perm)) && matches(`${n.title} go to`),
  );
  const teamItems = [
    ...teams
      .filter((t) => t.slug !== activeSlug)
      .map((t) => ({
        id: `team ${t.slug}`,
        label: `Switch to ${t.name}`,
        hint: t.slug,
        run: () => (close(), switchTeam(t.slug)),
      })),
    {
      id: "team-create",
      label: "Create team",
      hint: "new team",
      run: () => (close(), window.dispatchEvent(new Event(CREATE_TEAM_EVENT))),
    },
  ].filter((t) => matches(`${t.label} ${t.hint} team`));
  const nothing =
    actions.length === 0 && pages.length === 0 && sandboxes.length === 0 && teamItems.length === 0 && !typedId;

  // The selection follows the filtering: after each keystroke the first item shown is selected, so
  // Enter runs what the user typed for (cmdk keeps a stale selection when it does not filter itself).
  const firstValue = typedId
    ? `open ${typedId}`
    : (actions[0]?.id ??
      teamItems[0]?.id ??
      (sandboxes[0] ? `sandbox ${sandboxes[0].id}` : pages[0] ? `page ${pages[0].href}` : ""));
  const [selected, setSelected] = useState(firstValue);
  const [selectedFor, setSelectedFor] = useState(`${needle}\n${firstValue}`);
  if (selectedFor !== `${needle}\n${firstValue}`) {
    setSelectedFor(`${needle}\n${firstValue}`);
    setSelected(firstValue);
  }

  return (
    <Dialog
      open={open}
      onOpenChange={(o) => (o ? onOpenChange(true) : close())}
      title="Command palette"
      hideTitle
      className="max-w-xl"
    >
      <Command
        shouldFilter={false}
        label="Command or sandbox id"
        loop
        value={selected}
        onValueChange={setSelected}
        className="-m-6 flex flex-col"
      >
        <div className="border-b px-3">
          <Command.Input
            value={search}
            onValueChange={setSearch}
            placeholder="Type a sandbox id or a command…"
            className="h-12 w-full bg-transparent text-sm outline-none placeholder:text-muted-foreground"
          />
        </div>
        <Command.List label="Results" className="max-h-96 overflow-y-auto p-2">
          {nothing ? (
            <p className="px-3 py-6 text-center text-sm text-muted-foreground">Nothing matches “{search}”.</p>
          ) : null}
          {typedId ? (
            <Command.Group heading="Sandbox" className={groupClass}>
              <Command.Item value={`open ${typedId}`} onSelect={() => go(sandboxHref(typedId))} className={itemClass}>
                <span>
                  Open <span className="font-mono">{typedId}</span>
                </span>
              </Command.Item>
            </Command.Group>
          ) : null}
          {actions.length ? (
            <Command.Group heading="Actions" className={groupClass}>
              {actions.map((a) => (
                <Command.Item key={a.id} value={a.id} onSelect={a.run} className={itemClass}>
                  <span>{a.label}</span>
                  <span className="truncate font-mono text-xs text-muted-foreground">{a.hint}</span>
                </Command.Item>
              ))}
            </Command.Group>
          ) : null}
          {teamItems.length ? (
            <Command.Group heading="Teams" className={groupClass}>
              {teamItems.map((t) => (
                <Command.Item key={t.id} value={t.id} onSelect={t.run} className={itemClass}>
                  <span className="truncate">{t.label}</span>
                  <span className="truncate font-mono text-xs text-muted-foreground">{t.hint}</span>
                </Command.Item>
              ))}
            </Command.Group>
          ) : null}
          {sandboxes.length ? (
            <Command.Group heading="Sandboxes" className={groupClass}>
              {sandboxes.map((s) => (
                <Command.Item
                  key={s.id}
                  value={`sandbox ${s.id}`}
                  onSelect={() => go(sandboxHref(s.id))}
                  className={itemClass}
                >
                  <span className="truncate font-mono text-xs">{s.id}</span>
                  <span className="text-xs text-muted-foreground">{s.status}</span>
                </Command.Item>
              ))}
            </Command.Group>
          ) : null}
          {pages.length ? (
            <Command.Group heading="Go to" className={groupClass}>
              {pages.map((n) => (
                <Command.Item key={n.href} value={`page ${n.href}`} onSelect={() => go(n.href)} className={itemClass}>
                  <span>{n.title}</span>
                  <span className="font-mono text-xs text-muted-foreground">{n.href}</span>
                </Command.Item>
              ))}
            </Command.Group>
          ) : null}
        </Command.List>
      </Command>
    </Dialog>
  );
}

"use client";

/**
 * The current folder as links, from its root (/workspace or /persist) down. Every crumb but the
 * last is a button that goes there; the last is the page's current location.
 */
export function Breadcrumbs({
  root,
  path,
  onNavigate,
}: {
  root: string;
  path: string;
  onNavigate: (path: string) => void;
}) {
  const rest = path.slice(root.length).split("/").filter(Boolean);
  const crumbs = [
    { name: root, path: root },
    ...rest.map((name, i) => ({ name, path: `${root}/${rest.slice(0, i + 1).join("/")}` })),
  ];
  return (
    <nav aria-label="Folder" className="min-w-0">
      <ol className="flex min-w-0 flex-wrap items-center gap-1 font-mono text-sm">
        {crumbs.map((c, i) => {
          const last = i === crumbs.length - 1;
          return (
            <li key={c.path} className="flex min-w-0 items-center gap-1">
              {i > 0 ? (
                <span aria-hidden="true" className="text-muted-foreground">
                  /
                </span>
              ) : null}
              {last ? (
                <span aria-current="location" className="truncate font-semibold">
                  {c.name}
                </span>
              ) : (
                <button
                  type="button"
                  onClick={() => onNavigate(c.path)}
                  className="truncate rounded-sm text-primary underline-offset-4 hover:underline focus-visible:outline-2 focus-visible:outline-ring"
                >
                  {c.name}
                </button>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

"use client";

// The console's links and client-side navigations, with the tab's team kept: every console URL
// says which team (`?team=<slug>`, lib/team-param.ts), so a link pasted to a teammate opens the
// same thing and each tab stays in its own team. ESLint (eslint.config.js) refuses next/link and
// next/navigation's useRouter elsewhere, so a new link cannot forget the team.
//
//   import { TeamLink as Link } from "…/components/layout/team-link";   // drop-in for next/link
//   const router = useTeamRouter();                                      // drop-in for useRouter()

// eslint-disable-next-line no-restricted-imports -- the one wrapper of next/link
import Link from "next/link";
// eslint-disable-next-line no-restricted-imports -- the one wrapper of useRouter
import { useRouter, useSearchParams } from "next/navigation";
import { useMemo, type ComponentProps } from "react";
import { readTeamParam, withTeam } from "../../lib/team-param";

/** The tab's team: the page URL's `?team=`, or null on a page without one. */
export function useTeamSlug(): string | null {
  return readTeamParam(useSearchParams());
}

type Href = ComponentProps<typeof Link>["href"];

/** `href` with the team added when it is a same-origin path (string or `{ pathname, query }`). */
export function teamHref(href: Href, team: string | null): Href {
  if (!team) return href;
  if (typeof href === "string") return withTeam(href, team);
  if (href.pathname?.startsWith("/") || (!href.pathname && !href.host)) {
    const query = typeof href.query === "object" && href.query !== null ? href.query : {};
    return { ...href, query: { ...query, team } };
  }
  return href;
}

/** next/link, with the tab's team kept in the href. */
export function TeamLink({ href, ...props }: ComponentProps<typeof Link>) {
  const team = useTeamSlug();
  return <Link href={teamHref(href, team)} {...props} />;
}

/** next/navigation's useRouter, whose push, replace and prefetch keep the tab's team. */
export function useTeamRouter(): ReturnType<typeof useRouter> {
  const router = useRouter();
  const team = useTeamSlug();
  return useMemo(
    () => ({
      ...router,
      push: (href, options) => router.push(withTeam(href, team), options),
      replace: (href, options) => router.replace(withTeam(href, team), options),
      prefetch: (href, options) => router.prefetch(withTeam(href, team), options),
    }),
    [router, team],
  );
}

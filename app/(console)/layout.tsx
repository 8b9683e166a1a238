import type { ReactNode } from "react";
import type { ConnectionStatusProps } from "../../components/layout/connection-status";
import { Header } from "../../components/layout/header";
import { Sidebar } from "../../components/layout/sidebar";
import { requireUser } from "../../lib/server/auth";

// No orkestr connection can exist yet: the token vault (Settings → Connections) comes with issue 4.
// The user's active connection will be loaded here, server-side.
const noConnection: ConnectionStatusProps = {
  label: "orkestr API",
  baseUrl: "",
  state: "none",
  detail: "Connections (Settings → Connections) arrive with issue 4",
};

/**
 * The console shell: skip link, sidebar (a drawer below md), header, and the page in <main>.
 * It checks the session itself (proxy.ts never does): no live session → /login, no user yet → /setup.
 * Pages and API routes that read data check again (the layout is not re-run on client navigations).
 */
export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const { user } = await requireUser();
  return (
    <div className="flex min-h-dvh">
      <a
        href="#main"
        className="sr-only focus:not-sr-only focus:fixed focus:top-2 focus:left-2 focus:z-50 focus:rounded-md focus:bg-primary focus:px-3 focus:py-2 focus:text-sm focus:font-medium focus:text-primary-foreground"
      >
        Skip to content
      </a>
      <Sidebar />
      <div className="flex min-w-0 flex-1 flex-col">
        <Header connection={noConnection} user={{ name: user.name, email: user.email }} />
        <main id="main" tabIndex={-1} className="mx-auto w-full max-w-6xl flex-1 px-4 py-6 outline-none md:px-8 md:py-8">
          {children}
        </main>
      </div>
    </div>
  );
}

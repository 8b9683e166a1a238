"use client";

import { createContext, useContext, type ReactNode } from "react";

// How the sandbox was made when not in the browser ("via API token <name>", "via MCP (<name>)"),
// worked out by the detail layout on the server: the token's name is the team's to know, looked up
// there (lib/server/creator-via-names.ts), not in the browser.

const CreatedVia = createContext<string | null>(null);

export function CreatedViaProvider({ via, children }: { via: string | null; children: ReactNode }) {
  return <CreatedVia.Provider value={via}>{children}</CreatedVia.Provider>;
}

/** "via API token <name>" / "via MCP (<name>)", or null (made in the browser, or outside Baton). */
export function useCreatedVia(): string | null {
  return useContext(CreatedVia);
}

"use client";

import { createContext, useContext, type ReactNode } from "react";
import type { ComputeRates } from "../../lib/pricing";

// The team's rate card (issue 22), read on the server by the pages that show a sandbox's cost (the
// list and the detail layout: lib/server/usage/rates.ts getUsageRates) and handed to their client
// leaves, so "Cost so far" is priced as /usage prices it and follows the card when it changes. Null
// when the viewer may not read usage (usage.read): the cost then reads "—" rather than a guess.

const Rates = createContext<ComputeRates | null>(null);

export function UsageRatesProvider({ rates, children }: { rates: ComputeRates | null; children: ReactNode }) {
  return <Rates.Provider value={rates}>{children}</Rates.Provider>;
}

/** The team's CPU and memory rates (µ€ per hour), or null (not readable, or no provider above). */
export function useUsageRates(): ComputeRates | null {
  return useContext(Rates);
}

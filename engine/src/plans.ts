import type { PlanName } from "./config.js";

/** Sizes per the seed's limits page (seed 000): the menu is the same on every plan, availability differs. */
export const SIZES = {
  small: { cpu: 1, memory_mb: 1024 },
  medium: { cpu: 2, memory_mb: 4096 },
  large: { cpu: 4, memory_mb: 8192 },
} as const;
export type SizeName = keyof typeof SIZES;

export const REGIONS = ["fsn1", "hel1", "rbx"] as const;

/** The default HTTPS hosts a `restricted` sandbox may reach (package registries, GitHub, LLM APIs). */
export const DEFAULT_EGRESS_DOMAINS = [
  "pypi.org",
  "files.pythonhosted.org",
  "registry.npmjs.org",
  "github.com",
  "codeload.github.com",
  "objects.githubusercontent.com",
  "api.openai.com",
  "api.anthropic.com",
  "api.mistral.ai",
];

export interface Plan {
  name: PlanName;
  allowedSizes: SizeName[];
  /** Concurrent RAM budget over live (non-paused) sandboxes. */
  ramBudgetMb: number;
  maxPaused: number;
  /** Longest countdown one create / set_timeout may ask for. */
  maxTimeoutSeconds: number;
  /** Continuous running cap; null = unlimited. */
  maxRunningSeconds: number | null;
  trialCreditEur: number;
  /** Free hits a hard wall at the trial credit; paid plans switch to metered billing. */
  trialIsHardLimit: boolean;
  networkOpenAllowed: boolean;
  previewsAllowed: boolean;
  maxNamedSnapshots: number;
  maxVolumes: number;
  maxVolumeGb: number;
  maxTemplates: number;
}

export const PLANS: Record<PlanName, Plan> = {
  free: {
    name: "free",
    allowedSizes: ["small"],
    ramBudgetMb: 2048,
    maxPaused: 1,
    maxTimeoutSeconds: 1800,
    maxRunningSeconds: 3600,
    trialCreditEur: 5,
    trialIsHardLimit: true,
    networkOpenAllowed: false,
    previewsAllowed: false,
    maxNamedSnapshots: 1,
    maxVolumes: 1,
    maxVolumeGb: 10,
    maxTemplates: 5,
  },
  payg: {
    name: "payg",
    allowedSizes: ["small", "medium", "large"],
    ramBudgetMb: 32 * 1024,
    maxPaused: 10,
    maxTimeoutSeconds: 86_400,
    maxRunningSeconds: null,
    trialCreditEur: 25,
    trialIsHardLimit: false,
    networkOpenAllowed: true,
    previewsAllowed: true,
    maxNamedSnapshots: 10,
    maxVolumes: 10,
    maxVolumeGb: 100,
    maxTemplates: 15,
  },
  enterprise: {
    name: "enterprise",
    allowedSizes: ["small", "medium", "large"],
    ramBudgetMb: 128 * 1024,
    maxPaused: 50,
    maxTimeoutSeconds: 86_400,
    maxRunningSeconds: null,
    trialCreditEur: 0,
    trialIsHardLimit: false,
    networkOpenAllowed: true,
    previewsAllowed: true,
    maxNamedSnapshots: 50,
    maxVolumes: 50,
    maxVolumeGb: 100,
    maxTemplates: 50,
  },
};

/** Pay-as-you-go rates (seed 000): metered on on-CPU seconds and working-set GiB-seconds. */
export const PRICES_EUR = { vcpuHour: 0.045, gibHour: 0.015 } as const;

export function costEur(cpuSeconds: number, gbSeconds: number): number {
  return (cpuSeconds / 3600) * PRICES_EUR.vcpuHour + (gbSeconds / 3600) * PRICES_EUR.gibHour;
}

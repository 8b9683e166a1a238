import type { EngineConfig } from "../../config.js";
import { ApiError } from "../../errors.js";
import { PLANS, SIZES, type Plan, type SizeName } from "../../plans.js";
import type { CreateSandboxBody } from "../../schemas.js";
import type { UsageLedger } from "../usage.js";
import type { SandboxRepository } from "./repository.js";

/** The engine's plan, with the trial credit the config may override (tests and demos set it). */
export function planFor(config: EngineConfig): Plan {
  const plan = PLANS[config.plan];
  return config.trialCreditEur === undefined ? plan : { ...plan, trialCreditEur: config.trialCreditEur };
}

/**
 * What the account's plan allows a create or resume: sizes, the countdown cap, the concurrent RAM
 * budget, the trial credit. Refusals are the plan's own codes (403 size_not_allowed / plan_limit,
 * 429 concurrency_limit, 402 trial_exhausted); the machine's capacity is checked after these,
 * by host admission (services/admission.ts).
 */
export class PlanAdmission {
  constructor(
    readonly plan: Plan,
    private readonly repo: SandboxRepository,
    private readonly usage: UsageLedger,
  ) {}

  /** The size a create asks for, by name or by first-generation cpu/memory_mb fields. */
  resolveShape(body: CreateSandboxBody): { size: string; cpu: number; memory_mb: number } {
    const plan = this.plan;
    if (body.size) {
      if (!plan.allowedSizes.includes(body.size)) {
        throw new ApiError(
          "size_not_allowed",
          `Size "${body.size}" is not available on the ${plan.name} plan (allowed: ${plan.allowedSizes.join(", ")})`,
          { allowed_sizes: plan.allowedSizes },
        );
      }
      return { size: body.size, ...SIZES[body.size] };
    }
    if (body.cpu === undefined && body.memory_mb === undefined) return { size: "small", ...SIZES.small };
    // First-generation fields: capped by the largest size the plan allows.
    const biggest = SIZES[plan.allowedSizes[plan.allowedSizes.length - 1] as SizeName];
    const cpu = body.cpu ?? 1;
    const memory_mb = body.memory_mb ?? 1024;
    if (cpu > biggest.cpu || memory_mb > biggest.memory_mb) {
      throw new ApiError(
        "size_not_allowed",
        `cpu ${cpu} / memory_mb ${memory_mb} exceeds the ${plan.name} plan's largest size (${biggest.cpu} vCPU / ${biggest.memory_mb} MB)`,
      );
    }
    const named = (Object.keys(SIZES) as SizeName[]).find(
      (s) => SIZES[s].cpu === cpu && SIZES[s].memory_mb === memory_mb,
    );
    return { size: named ?? "custom", cpu, memory_mb };
  }

  checkTimeout(seconds: number): void {
    if (seconds > this.plan.maxTimeoutSeconds) {
      throw new ApiError(
        "plan_limit",
        `timeout_seconds ${seconds} exceeds the ${this.plan.name} plan's countdown cap of ${this.plan.maxTimeoutSeconds} s`,
        { max_timeout_seconds: this.plan.maxTimeoutSeconds },
      );
    }
  }

  checkRamBudget(account: string, extraMb: number): void {
    const used = this.repo.liveMemoryMb(account);
    if (used + extraMb > this.plan.ramBudgetMb) {
      throw new ApiError(
        "concurrency_limit",
        `The ${this.plan.name} plan's concurrent RAM budget is ${this.plan.ramBudgetMb} MB; live sandboxes use ${used} MB and this one needs ${extraMb} MB. Pause or terminate a sandbox first.`,
        { ram_budget_mb: this.plan.ramBudgetMb, ram_used_mb: used },
        { "Retry-After": "30" },
      );
    }
  }

  checkTrialCredit(account: string): void {
    if (this.plan.trialIsHardLimit && this.creditUsedEur(account) >= this.plan.trialCreditEur) {
      throw new ApiError(
        "trial_exhausted",
        `The ${this.plan.name} plan's one-time trial credit of EUR ${this.plan.trialCreditEur} is used up`,
        { trial_credit_eur: this.plan.trialCreditEur },
      );
    }
  }

  /** Whether a user's pause fits the plan's cap on paused sandboxes (a countdown's pause is checked by the caller). */
  checkPausedCap(account: string): void {
    if (this.pausedCapReached(account)) {
      throw new ApiError(
        "snapshot_cap_reached",
        `The ${this.plan.name} plan holds at most ${this.plan.maxPaused} paused sandboxes; resume or terminate one first`,
        { max_paused: this.plan.maxPaused },
      );
    }
  }

  pausedCapReached(account: string): boolean {
    return this.repo.pausedCount(account) >= this.plan.maxPaused;
  }

  /**
   * Trial credit consumed so far: all metered CPU and RAM at pay-as-you-go rates, from the same
   * ledger as the usage report, capped at the credit (beyond it a paid plan is billed instead).
   */
  creditUsedEur(account: string): number {
    return Math.min(this.plan.trialCreditEur, this.usage.lifetimeCostEur(account));
  }
}

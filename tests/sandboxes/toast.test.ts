import { beforeEach, describe, expect, it, vi } from "vitest";

// The lazy toast facade: sonner is imported on first use, and a toast raised before the outlet has
// mounted is held until it has (sonner drops toasts nobody listens to).
const shown: string[] = [];
vi.mock("sonner", () => ({
  toast: {
    success: (message: string) => shown.push(`success:${message}`),
    error: (message: string, options?: { description?: string }) =>
      shown.push(`error:${message}:${options?.description ?? ""}`),
  },
  Toaster: () => null,
}));

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("toast facade", () => {
  beforeEach(() => {
    shown.length = 0;
    vi.resetModules();
  });

  it("holds toasts until the outlet is mounted, then shows them in order with their options", async () => {
    const { toast, markToasterMounted } = await import("../../components/ui/toast");
    toast.success("Sandbox paused");
    toast.error("Could not resume", { description: "sandbox_gone" });
    await flush();
    expect(shown).toEqual([]);
    markToasterMounted();
    await flush();
    expect(shown).toEqual(["success:Sandbox paused", "error:Could not resume:sandbox_gone"]);
  });

  it("shows a toast at once when the outlet is already there", async () => {
    const { toast, markToasterMounted } = await import("../../components/ui/toast");
    markToasterMounted();
    toast.success("Copied");
    await flush();
    expect(shown).toEqual(["success:Copied"]);
  });
});

describe("toast outlet on demand", () => {
  beforeEach(() => {
    vi.resetModules();
  });

  it("is not wanted until the first toast, which tells the subscribers once", async () => {
    const { toast, toastsWanted, subscribeToToastsWanted } = await import("../../components/ui/toast");
    let calls = 0;
    const unsubscribe = subscribeToToastsWanted(() => calls++);
    expect(toastsWanted()).toBe(false);
    toast.success("Sandbox paused");
    expect(toastsWanted()).toBe(true);
    toast.error("Could not resume");
    expect(calls).toBe(1);
    unsubscribe();
  });
});

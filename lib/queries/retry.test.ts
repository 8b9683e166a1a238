import { QueryClient } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { OrkestrConnectionError, OrkestrError } from "../orkestr/errors";
import { isTransient, retryDelay, retryDelayMs, retryDueAt, shouldRetry } from "./retry";

const answer = (status: number, code = "x", retryAfterSeconds: number | null = null) =>
  new OrkestrError({ status, code, detail: "d", retryAfterSeconds });

describe("the console's read retry policy", () => {
  it("retries what time can fix, without a count limit, and nothing else", () => {
    for (const e of [
      answer(503, "upstream_unreachable"),
      answer(502, "upstream_reset"),
      answer(503, "fleet_full"),
      answer(503, "database_unavailable"),
      answer(500),
      answer(504),
      answer(429),
      answer(408),
      new OrkestrConnectionError({ baseUrl: "the Baton server" }),
    ]) {
      expect(isTransient(e), `${e.status} ${e.code}`).toBe(true);
      expect(shouldRetry(50, e)).toBe(true);
    }
    for (const e of [answer(400), answer(401), answer(404), answer(409), answer(422), answer(501)]) {
      expect(shouldRetry(0, e), `${e.status}`).toBe(false);
    }
    expect(shouldRetry(0, new OrkestrError({ status: 0, code: "aborted", detail: "x" }))).toBe(false);
    // A bug in the page (no status) is shown, not retried.
    expect(shouldRetry(0, new TypeError("x is undefined"))).toBe(false);
  });

  it("waits the server's Retry-After, capped at 5 minutes, else doubles from 1 s to 30 s with jitter", () => {
    expect(retryDelayMs(1, answer(503, "fleet_full", 8))).toBe(8_000);
    expect(retryDelayMs(7, answer(503, "fleet_full", 8))).toBe(8_000);
    expect(retryDelayMs(1, answer(503, "fleet_full", 3600))).toBe(300_000);
    const none = () => 0;
    expect([1, 2, 3, 4, 5, 6, 9].map((n) => retryDelayMs(n, answer(502), none))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect(retryDelayMs(2, answer(502), () => 0.999)).toBeLessThanOrEqual(2_400);
  });

  it("remembers when each retry is due, so a notice counts down to the real moment", () => {
    const e = answer(503, "fleet_full", 8);
    const before = Date.now();
    const ms = retryDelay(1, e);
    expect(retryDueAt(e)).toBeGreaterThanOrEqual(before + ms);
    expect(retryDueAt(answer(503))).toBeNull();
  });

  it("keeps a read failing on 503s retrying until it answers, (TanStack Query with these options)", async () => {
    const client = new QueryClient({ defaultOptions: { queries: { retry: shouldRetry, retryDelay } } });
    let calls = 0;
    const data = await client.fetchQuery({
      queryKey: ["x"],
      queryFn: () => {
        calls++;
        // Four failures: more than the old policy's two retries allowed.
        if (calls <= 4) throw answer(503, "upstream_unreachable", 0.05);
        return "ok";
      },
    });
    expect(data).toBe("ok");
    expect(calls).toBe(5);
    client.clear();
  });
});

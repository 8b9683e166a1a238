import http from "node:http";
import https from "node:https";
import { connectPlan, REFUSED_CODE } from "../webhook-guard.js";

/** A receiver answers within this long or the attempt failed (webhook deliveries: any 2xx within 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer the delivery log keeps. */
export const RESPONSE_EXCERPT_BYTES = 2048;

export interface AttemptResult {
  /** HTTP status, or null when no answer arrived (connect error, timeout). */
  status: number | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

/**
 * One POST of a delivery. A fresh connection per attempt (no pooled agent), so a dead receiver
 * holds no sockets between attempts; redirects are not followed (a 3xx is a failure). Internal
 * addresses are refused before connecting (webhook-guard.ts), unless their origin is allowed.
 */
export function postDelivery(
  target: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  allow: readonly string[],
): Promise<AttemptResult> {
  const started = Date.now();
  const url = new URL(target);
  const plan = connectPlan(url, allow);
  if (plan.refused !== null)
    return Promise.resolve({ status: null, excerpt: null, error: plan.refused, durationMs: 0 });
  const client = url.protocol === "https:" ? https : http;
  const payload = Buffer.from(body, "utf8");
  return new Promise((resolve) => {
    let settled = false;
    // The status, once headers arrived: a receiver that then stalls still shows what it answered.
    let statusSeen: number | null = null;
    const finish = (r: Omit<AttemptResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve({ ...r, durationMs: Date.now() - started });
    };
    const req = client.request(
      url,
      {
        method: "POST",
        agent: false,
        lookup: plan.lookup,
        headers: { ...headers, "Content-Type": "application/json", "Content-Length": String(payload.length) },
      },
      (res) => {
        statusSeen = res.statusCode ?? null;
        const kept: Buffer[] = [];
        let size = 0;
        const answered = () => {
          // Invalid UTF-8, or a character cut at the 2 KiB edge, shows as U+FFFD.
          finish({ status: res.statusCode ?? null, excerpt: Buffer.concat(kept).toString("utf8"), error: null });
          res.destroy();
        };
        res.on("data", (c: Buffer) => {
          const room = RESPONSE_EXCERPT_BYTES - size;
          if (room > 0) {
            kept.push(c.subarray(0, room));
            size += Math.min(c.length, room);
          }
          // With the excerpt full, the rest of a large answer is not worth reading.
          if (size >= RESPONSE_EXCERPT_BYTES) answered();
        });
        res.on("end", answered);
        res.on("error", answered);
      },
    );
    const timer = setTimeout(() => {
      finish({ status: statusSeen, excerpt: null, error: `no complete answer within ${DELIVERY_TIMEOUT_MS / 1000} s` });
      req.destroy();
    }, DELIVERY_TIMEOUT_MS);
    const onAbort = () => {
      finish({ status: null, excerpt: null, error: "aborted" });
      req.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    req.on("error", (e: NodeJS.ErrnoException) =>
      finish({
        status: null,
        excerpt: null,
        error: e.code && e.code !== REFUSED_CODE ? `${e.code}: ${e.message}` : e.message,
      }),
    );
    req.end(payload);
  });
}

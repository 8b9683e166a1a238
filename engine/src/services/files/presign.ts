import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "../../errors.js";
import { iso } from "../../lib/time.js";

/** Presigned URLs: HMAC-SHA256 over method|account|sandbox_id|path|exp (and |max for uploads). */

export interface SignedParams {
  method: "GET" | "PUT";
  /** The account the URL acts for (the sandbox's): a URL never serves another account. */
  account: string;
  sandboxId: string;
  path: string;
  exp: number;
  /** Upload cap carried in the URL as `max`; part of the signature so it cannot be raised. */
  maxBytes?: number;
}

export function sign(key: Buffer, p: SignedParams): string {
  let msg = `${p.method}|${p.account}|${p.sandboxId}|${p.path}|${p.exp}`;
  if (p.method === "PUT") msg += `|${p.maxBytes ?? ""}`;
  return createHmac("sha256", key).update(msg).digest("hex");
}

/**
 * Checks a presigned request: the signature first (so a tampered `exp` is 403, not 410), then the
 * expiry. The signature binds method, sandbox, path and upload cap, so none can be swapped.
 */
export function verifySigned(
  key: Buffer,
  q: { exp?: string; sig?: string; max?: string },
  p: Omit<SignedParams, "exp" | "maxBytes">,
): { maxBytes?: number } {
  const bad = () =>
    new ApiError(
      "invalid_signature",
      "The presigned URL's signature does not match (wrong method, sandbox, path or a modified parameter)",
    );
  if (!q.exp || !/^\d{1,12}$/.test(q.exp) || !q.sig || !/^[0-9a-f]{64}$/i.test(q.sig)) throw bad();
  if (q.max !== undefined && !/^\d{1,16}$/.test(q.max)) throw bad();
  const exp = Number(q.exp);
  const maxBytes = q.max === undefined ? undefined : Number(q.max);
  const expected = Buffer.from(sign(key, { ...p, exp, maxBytes }), "hex");
  if (!timingSafeEqual(expected, Buffer.from(q.sig, "hex"))) throw bad();
  if (Date.now() > exp * 1000)
    throw new ApiError("url_expired", `The presigned URL expired at ${iso(exp * 1000)}; ask for a new one`, {
      expired_at: iso(exp * 1000),
    });
  return { maxBytes };
}

import { createHmac } from "node:crypto";

/** `sha256=<hex HMAC-SHA256 of the raw body>`, keyed by the whole `whsec_…` string as UTF-8 (the `X-Orkestr-Signature` header of a delivery). */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", Buffer.from(secret, "utf8")).update(body, "utf8").digest("hex")}`;
}

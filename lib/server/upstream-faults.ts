import "server-only";
import { OrkestrConnectionError, OrkestrTimeoutError } from "../orkestr/errors";

// An upstream that could not be reached, or hung up, in Baton's own words: what happened and what
// happens next. Only the server can tell a refused connection (the request never arrived, so
// nothing changed: safe to repeat) from a reset one (it may have arrived: a change may have been
// made); the browser sees both as one status and code, plus Retry-After so its retries wait for
// the upstream's restart rather than hammering it.

/** How long a browser should wait before asking again: an engine restart takes a few seconds. */
export const UNREACHABLE_RETRY_SECONDS = 3;
export const RESET_RETRY_SECONDS = 2;

export interface UpstreamFault {
  status: number;
  code: "upstream_unreachable" | "upstream_reset";
  detail: string;
  retryAfterSeconds: number;
}

/** The first system error code (ECONNREFUSED, UND_ERR_SOCKET…) in an error's cause chain. */
export function systemCode(err: unknown): string | null {
  let c: unknown = err;
  for (let depth = 0; depth < 5 && c && typeof c === "object"; depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && /^(E[A-Z_]+|UND_ERR[A-Z_]*)$/.test(code)) return code;
    c = (c as { cause?: unknown }).cause;
  }
  return null;
}

const REFUSED = new Set(["ECONNREFUSED"]);
// The connection was there and then was not: reset, closed mid-answer, or a socket error.
const RESET = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** " at https://host:port" from the request's URL (never its path or query), or nothing. */
function originOf(url: string | undefined): string {
  try {
    return url ? ` at ${new URL(url).origin}` : "";
  } catch {
    return "";
  }
}

function isRead(method: string | undefined): boolean {
  return !method || method === "GET" || method === "HEAD";
}

/**
 * Baton's answer for a connection error, or null when it is not one of the two kinds above (DNS
 * failures, TLS errors and timeouts keep their own wording: retrying will not fix a wrong URL).
 */
export function describeUpstreamFault(err: OrkestrConnectionError): UpstreamFault | null {
  if (err instanceof OrkestrTimeoutError) return null;
  const code = systemCode(err.cause);
  // "broke while reading the response": the answer had started, so the request did arrive.
  const midAnswer = /broke while reading the response/.test(err.detail);
  const where = `The orkestr API${originOf(err.url)}`;
  if (code && REFUSED.has(code)) {
    return {
      status: 503,
      code: "upstream_unreachable",
      detail:
        `${where} refused the connection (${code}): it is not running or is restarting. ` +
        (isRead(err.method)
          ? "Baton keeps retrying on its own."
          : `Nothing was changed; try again in ${UNREACHABLE_RETRY_SECONDS} s or so.`),
      retryAfterSeconds: UNREACHABLE_RETRY_SECONDS,
    };
  }
  if ((code && RESET.has(code)) || midAnswer) {
    return {
      status: 502,
      code: "upstream_reset",
      detail:
        `${where} closed the connection before answering${code ? ` (${code})` : ""}. ` +
        (isRead(err.method)
          ? "Baton keeps retrying on its own."
          : "Baton did not repeat the request: it may or may not have taken effect."),
      retryAfterSeconds: RESET_RETRY_SECONDS,
    };
  }
  return null;
}

import "server-only";
import { AppError } from "./errors";

// The orkestr v1 contract's error shapes, for the clients of that contract (the orkestr SDK, curl)
// that reach /api/v1 with an API token (README "The orkestr SDK through Baton"):
// - a refused credential is 401 `unauthorized` (the contract's code; the SDK raises its
//   authentication error on it), with `reason: "invalid_token"` (or "sso_reauth_required": a right
//   token whose SSO sign-in must be renewed) and RFC 6750's `WWW-Authenticate: … error="invalid_token"`;
// - a 422 `validation_error` to a token request carries FastAPI's `detail: [{loc, msg, type}]`
//   (what the SDK parses), with Baton's readable line kept in `message` and `errors` by field.
// The browser (cookie requests) keeps Baton's one-line `detail`, which the console shows as is.

/** Where route() parsed an input: the FastAPI `loc` root of each issue in it. */
export type InputPlace = "path" | "query" | "body";

const places = new WeakMap<AppError, InputPlace>();

/** Remembers which input a validation error is about (route()'s parseWith). */
export function markInputPlace(err: AppError, place: InputPlace): AppError {
  places.set(err, place);
  return err;
}

/** The 401 codes of a refused API token, which the contract answers as `unauthorized` with this `reason`. */
const TOKEN_REFUSALS = new Set<unknown>(["invalid_token", "sso_reauth_required"]);

/** The contract's `reason` for a Baton refusal code, when the contract calls it `unauthorized` (else null). */
export function contractReason(code: unknown): string | null {
  return TOKEN_REFUSALS.has(code) ? (code as string) : null;
}

interface ErrorBody {
  detail?: unknown;
  code?: unknown;
  errors?: Record<string, string>;
  [key: string]: unknown;
}

/** `response` (an error answer of route()) in the contract's shape, or `response` itself. */
export async function contractErrorResponse(
  response: Response,
  err: unknown,
  opts: { bearer: boolean },
): Promise<Response> {
  if (response.status !== 401 && response.status !== 422) return response;
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as ErrorBody | null;
  if (!body) return response;
  let next: ErrorBody | null = null;
  const reason = contractReason(body.code);
  if (reason) next = { ...body, code: "unauthorized", reason };
  else if (opts.bearer && body.code === "validation_error" && body.errors) {
    const root = err instanceof AppError ? (places.get(err) ?? "body") : "body";
    next = {
      ...body,
      message: body.detail,
      detail: Object.entries(body.errors).map(([field, msg]) => ({
        loc: field === "_" ? [root] : [root, ...field.split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p))],
        msg,
        type: "value_error",
      })),
    };
  }
  if (!next) return response;
  return new Response(JSON.stringify(next), { status: response.status, headers: response.headers });
}

// Create errors in plain words: what happened and what to do, by the error body's `code` (the contract:
// dispatch on the code, not the HTTP status). The upstream's own `detail` is always shown as well.

import type { OrkestrError } from "../../../lib/orkestr/errors";

export interface ExplainedError {
  title: string;
  /** What to do about it. */
  advice: string;
  /** The form field it is about, when there is one (the message is repeated there). */
  field?: string;
  /** Links that help (settings, volumes…). */
  link?: { href: string; label: string };
}

export function explainCreateError(error: OrkestrError): ExplainedError {
  switch (error.code) {
    case "trial_exhausted":
      return {
        title: "Your trial credit is used up",
        advice:
          "The one-time trial credit does not reset. Add a payment method with orkestr to keep creating sandboxes (paid plans continue at pay-as-you-go rates).",
        link: { href: "/usage", label: "See usage" },
      };
    case "plan_limit":
      return {
        title: "Your plan does not allow this",
        advice: "Pick a smaller value (the form shows your plan's caps), or upgrade your plan with orkestr.",
        field: /timeout/i.test(error.detail) ? "timeout_seconds" : undefined,
      };
    case "size_not_allowed":
      return {
        title: "This size is not on your plan",
        advice: "Choose one of the sizes your plan allows, or upgrade your plan with orkestr.",
        field: "size",
      };
    case "payment_verification_required":
      return {
        title: "Open network needs a verified payment method",
        advice:
          "Choose Restricted (a curated list of hosts, or your own) or Off, or verify a payment method with orkestr.",
        field: "network",
      };
    case "network_not_allowed":
      return { title: "Open network is not available here", advice: "Choose Restricted or Off.", field: "network" };
    case "concurrency_limit":
      return {
        title: "Too many sandboxes are running",
        advice:
          "Your plan's concurrent budget is used by live sandboxes. Pause or terminate one (paused sandboxes do not count), or choose a smaller size.",
        link: { href: "/sandboxes", label: "Open the sandbox list" },
      };
    case "fleet_full":
      return {
        title: "The fleet is full right now",
        advice:
          "This is temporary: nothing was created. The request is retried when the server says capacity should be back.",
      };
    case "volume_in_use":
      return {
        title: "The volume is in use",
        advice:
          "A volume backs one running or paused sandbox at a time. Terminate the sandbox that holds it, or choose another volume.",
        field: "volume",
      };
    case "volume_region_mismatch":
      return {
        title: "The volume lives in another region",
        advice:
          "A sandbox attaching a volume runs in the volume's region: set the region to Automatic, or move the volume first.",
        field: "region",
      };
    case "volume_not_found":
      return {
        title: "The volume was not found",
        advice: "It may have been deleted. Reload the list and choose another.",
        field: "volume",
      };
    case "template_not_found":
      return {
        title: "The template was not found",
        advice: "It may have been deleted, or this server cannot run it. Choose another template.",
        field: "template",
      };
    case "template_not_ready":
      return {
        title: "The template is not ready",
        advice:
          "Custom templates can be used once their build is ready. Wait for the build, or choose another template.",
        field: "template",
      };
    case "snapshot_not_found":
      return {
        title: "The snapshot was not found",
        advice: "It may have been deleted or still be in the making. Choose another snapshot.",
        field: "snapshot",
      };
    case "snapshot_region_mismatch":
      return {
        title: "The snapshot lives in another region",
        advice: "Forks run where their snapshot is: leave the region on Automatic.",
        field: "region",
      };
    case "region_unavailable":
      return { title: "This region is not available", advice: "Choose another region, or Automatic.", field: "region" };
    case "validation_error":
    case "bad_request":
      return { title: "The server did not accept the request", advice: "Correct the fields it names and try again." };
    case "no_connection":
      return {
        title: "No orkestr connection",
        advice: "Add a connection (or use the local engine) in Settings → Connections.",
        link: { href: "/settings/connections", label: "Open Connections" },
      };
    case "connection_token_rejected":
      return {
        title: "The connection's token was refused",
        advice: "Replace the token in Settings → Connections.",
        link: { href: "/settings/connections", label: "Open Connections" },
      };
    case "spend_cap_reached":
      return {
        title: "A spend cap is reached",
        advice:
          "Nothing was created. The text below names the cap and who can raise it; its spending starts from zero again with its next UTC day or month.",
        link: { href: "/usage", label: "See usage and caps" },
      };
    case "insufficient_scope":
    case "forbidden":
      return {
        title: "Not allowed",
        advice: "Your role or token does not allow creating sandboxes. Ask a team admin.",
      };
    case "rate_limited":
      return { title: "Too many requests", advice: "Wait a moment and try again." };
    case "upstream_unreachable":
      return {
        title: "The orkestr API is not answering",
        advice:
          "It refused the connection, so nothing was created. It is probably restarting: the request is sent again on its own, and nothing you typed is lost.",
      };
    case "upstream_reset":
      return {
        title: "The connection broke before an answer came",
        advice:
          "The sandbox may or may not have been created. Sending again is safe: the same request key goes with it, so a sandbox is never created twice.",
      };
    case "database_unavailable":
      return {
        title: "The Baton database is unavailable",
        advice: "Nothing was created. The request is sent again on its own once it should be back.",
      };
    case "connection_error":
      return {
        title: "The server could not be reached",
        advice:
          "Check your connection and try again: the same request key is sent again, so a sandbox is never created twice.",
      };
    default:
      return error.status >= 500
        ? {
            title: "The server failed to create the sandbox",
            advice: "Try again; if it keeps failing, the details below help whoever runs the server.",
          }
        : { title: "The sandbox could not be created", advice: "See the details below." };
  }
}

/** A definitive refusal (nothing was created): the next attempt gets a fresh Idempotency-Key. */
export function isDefinitiveRefusal(error: OrkestrError): boolean {
  return error.status >= 400 && error.status < 500 ? true : error.code === "fleet_full";
}

/**
 * Failures the form retries by itself after a visible countdown (Retry-After when the server sent
 * one): they are temporary, and a retry is safe. A refused request never arrived; any other is sent
 * again with the same Idempotency-Key, so the server creates at most one sandbox.
 */
export function isAutoRetried(error: OrkestrError): boolean {
  return (
    ["fleet_full", "upstream_unreachable", "upstream_reset", "database_unavailable"].includes(error.code) ||
    (error.status === 0 && error.code === "connection_error")
  );
}

// The create form's own check of a receiver URL: its shape only (absolute, http(s), a host, no
// fragment, at most 2048 characters, as the engine's schema takes it). Which addresses a webhook
// may reach is the engine's decision, not the browser's: only public https receivers and the
// receiver prefixes its operator allowed (ORKESTR_ENGINE_WEBHOOK_ALLOW). That answer, a 422 naming the
// reason, is shown as the engine wrote it; guessing it here would be wrong for one operator or another.

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: string; note: string | null } | { ok: false; problem: string };

const EXAMPLE = "https://hooks.example.com/orkestr";

/** Whether `raw` can be sent as a receiver URL, and a note for what only the engine can judge. */
export function checkReceiverUrl(raw: string): UrlCheck {
  const text = raw.trim();
  if (!text) return { ok: false, problem: "Enter the URL that should receive the events." };
  if (text.length > MAX_URL_LENGTH) return { ok: false, problem: `A URL is at most ${MAX_URL_LENGTH} characters.` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return {
      ok: false,
      problem: /^[a-z][a-z0-9+.-]*:/i.test(text)
        ? `That is not a valid URL. Use a full address such as ${EXAMPLE}.`
        : `Start with https:// — a full address such as ${EXAMPLE}.`,
    };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return {
      ok: false,
      problem: `Webhooks are delivered over HTTPS: the URL must start with https://, not ${url.protocol}//.`,
    };
  if (!url.hostname) return { ok: false, problem: "The URL has no host name." };
  if (url.hash) return { ok: false, problem: "Leave the #fragment out: it is never sent to the receiver." };
  const notes = [
    url.protocol === "http:"
      ? "Plain http:// is accepted only below an address the engine's operator allowed (such as Baton's own receiver); anything else must use https://."
      : null,
    // Allowed (some receivers want basic auth), but the URL is not a secret: every list shows it.
    url.username || url.password
      ? "The user name and password in this URL are stored and listed like the rest of it; the signature is what proves a delivery came from orkestr."
      : null,
  ].filter((n): n is string => n !== null);
  return { ok: true, url: text, note: notes.length ? notes.join(" ") : null };
}

/** The engine's 422 about a URL without its framing ("Invalid request: url: …"): the reason itself. */
export function refusalText(detail: string): string {
  return detail.replace(/^invalid request:\s*/i, "").replace(/^url:\s*/i, "");
}

/**
 * Base64 and UTF-8 helpers that run in browsers, Node and edge runtimes alike (no Buffer):
 * file bodies travel as base64 in JSON (GET/POST /v1/sandboxes/{id}/files, field `content`), and exec
 * stream chunks that are not valid UTF-8 too (`"encoding":"base64"`).
 */

const encoder = new TextEncoder();

export function utf8Encode(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes UTF-8; invalid sequences become U+FFFD rather than throwing. */
export function utf8Decode(bytes: Uint8Array): string {
  return new TextDecoder("utf-8").decode(bytes);
}

const CHUNK = 0x8000;

export function encodeBase64(input: Uint8Array | string): string {
  const bytes = typeof input === "string" ? utf8Encode(input) : input;
  let binary = "";
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/**
 * Decodes standard or URL-safe base64, with or without padding and whitespace. Throws a
 * TypeError on anything else.
 */
export function decodeBase64(input: string): Uint8Array {
  let s = input.replace(/[\s]/g, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.replace(/=+$/, "").length % 4 === 1) {
    throw new TypeError("not valid base64");
  }
  s = s.replace(/=+$/, "");
  s += "=".repeat((4 - (s.length % 4)) % 4);
  const binary = atob(s);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

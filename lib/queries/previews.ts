import { queryOptions } from "@tanstack/react-query";
import { apiJson } from "../api/core";
import { object } from "../api/read";
import { path } from "../orkestr/path";
// Types only: zod stays out of the browser bundle (lib/api/core.ts says why).
import type { Preview, PreviewToken } from "../orkestr/schemas/previews";
import { readExecResult } from "./files";

// The Previews tab's calls through Baton's /api/v1 proxy.
//
// Which ports are listening: the contract has no "list ports" route. GET /previews/{port} tells
// about one port (the local engine adds `listening`), so finding ports nobody typed takes a look
// inside: one exec that prints the kernel's TCP socket tables (/proc/net/tcp and tcp6, readable by
// any user, no `ss` or `netstat` needed in the image). Each scan is an exec, which the upstream
// records in the activity timeline and counts as activity, so scans are few: on opening the tab,
// on "Scan again", and every SCAN_INTERVAL_MS for at most AUTO_SCANS rounds while the tab is visible.

export const SCAN_INTERVAL_MS = 15_000;
/** Automatic scans after the first, before the tab waits for "Scan again" (about 5 minutes). */
export const AUTO_SCANS = 20;
/** How often the shown port's `listening` state is checked (a GET that runs nothing in the sandbox). */
export const DESCRIBE_INTERVAL_MS = 10_000;

/** Prints the egress proxy settings (their port is the sandbox's plumbing, not a preview) and the socket tables. */
export const SCAN_COMMAND = `printf 'proxy %s %s\\n' "\${HTTP_PROXY:-\${http_proxy:-}}" "\${HTTPS_PROXY:-\${https_proxy:-}}"; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null`;

/** The `listening` extension (local engine) on top of the contract's preview description. */
export type PreviewInfo = Preview & { listening?: boolean | null };

const readPreview = object<PreviewInfo>({}, { url: "string", listening: "boolean" });
const readPreviewToken = object<PreviewToken>({ preview_auth_token: "string" });

export interface ListeningPort {
  port: number;
  /** Bound to loopback only (127.0.0.1 / ::1) rather than every address: still reachable through the preview proxy. */
  loopbackOnly: boolean;
}

const LISTEN = "0A";

/**
 * The TCP ports in LISTEN state from /proc/net/tcp{,6} text, without the egress proxy's port(s)
 * named on the `proxy` line of SCAN_COMMAND. Sorted, one row per port.
 */
export function parseListeningPorts(text: string): ListeningPort[] {
  const hidden = new Set<number>();
  const found = new Map<number, boolean>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("proxy ")) {
      for (const m of line.matchAll(/:(\d{1,5})(?:\/|\s|$)/g)) hidden.add(Number(m[1]));
      continue;
    }
    // "  0: 0100007F:1F40 00000000:0000 0A ..." — sl, local address:port, remote, state
    const cols = line.split(/\s+/);
    if (cols.length < 4 || !/^\d+:$/.test(cols[0]!) || cols[3] !== LISTEN) continue;
    const [addr, portHex] = cols[1]!.split(":");
    if (!addr || !portHex) continue;
    const port = parseInt(portHex, 16);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) continue;
    const loopback = addr === "0100007F" || addr === "00000000000000000000000001000000";
    // A port bound on both loopback and any address counts as reachable from everywhere.
    found.set(port, (found.get(port) ?? true) && loopback);
  }
  return [...found]
    .filter(([port]) => !hidden.has(port))
    .sort((a, b) => a[0] - b[0])
    .map(([port, loopbackOnly]) => ({ port, loopbackOnly }));
}

export const previewKeys = {
  all: (id: string) => ["sandboxes", "previews", id] as const,
  scan: (id: string) => ["sandboxes", "previews", id, "scan"] as const,
  describe: (id: string, port: number) => ["sandboxes", "previews", id, "port", port] as const,
};

export const previewQueries = {
  /** The listening ports, by exec (see the header): call only while the sandbox runs, or it may wake it. */
  scan: (id: string) =>
    queryOptions({
      queryKey: previewKeys.scan(id),
      queryFn: async ({ signal }): Promise<ListeningPort[]> => {
        const res = await apiJson(
          {
            method: "POST",
            path: path`/api/v1/sandboxes/${id}/exec`,
            body: { command: SCAN_COMMAND, cwd: "/", timeout_seconds: 15 },
            signal,
          },
          readExecResult,
        );
        return parseListeningPorts(res.stdout ?? "");
      },
      staleTime: 0,
    }),
  /** Host, URL, auth_required (and `listening` on the local engine) of one port. */
  describe: (id: string, port: number) =>
    queryOptions({
      queryKey: previewKeys.describe(id, port),
      queryFn: ({ signal }) => apiJson({ path: path`/api/v1/sandboxes/${id}/previews/${port}`, signal }, readPreview),
    }),
};

export const previewMutations = {
  /** A new preview_auth_token; the old one, and every cookie made from it, stop working at once. */
  rotateToken: (id: string) =>
    apiJson({ method: "POST", path: path`/api/v1/sandboxes/${id}/preview-token` }, readPreviewToken),
};

/** The preview URL with `?orkestr_token=` for the first hit (the upstream turns it into a cookie and redirects without it). */
export function withPreviewToken(url: string, token: string | null): string {
  if (!token) return url;
  try {
    const u = new URL(url);
    u.searchParams.set("orkestr_token", token);
    return u.toString();
  } catch {
    return url;
  }
}

/** A port typed by the user: an integer 1–65535, else null. */
export function parsePort(input: string): number | null {
  const s = input.trim();
  if (!/^\d{1,5}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 65_535 ? n : null;
}

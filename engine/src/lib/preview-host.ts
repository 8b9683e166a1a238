/**
 * Preview host names (GET /v1/sandboxes/:id/previews/:port, field `host`): `<port>-<sandbox id>.sbx.localhost:<engine port>`. Browsers
 * resolve every `*.localhost` name to loopback, so no DNS setup is needed. Sandbox ids contain `_`
 * and uppercase letters while browsers lowercase host names: ids are matched case-insensitively.
 */
export const PREVIEW_DOMAIN = "sbx.localhost";

/** The port-less `<id>.<base>` suffix the sandbox payload carries as `preview_host_base`. */
export function previewHostBase(sandboxId: string, enginePort: number): string {
  return `${sandboxId.toLowerCase()}.${PREVIEW_DOMAIN}:${enginePort}`;
}

/** What `get_host(port)` returns: the host (with the engine's port) that serves `port` of the sandbox. */
export function previewHost(sandboxId: string, port: number, enginePort: number): string {
  return `${port}-${previewHostBase(sandboxId, enginePort)}`;
}

export type PreviewHostMatch =
  | { kind: "preview"; port: number; sandboxId: string }
  /** Under the preview domain but not a preview name: answered by the proxy (404), never by the API. */
  | { kind: "invalid" };

const LABEL = /^([1-9]\d{0,4})-([a-z0-9_]{1,64})$/;

/**
 * Reads a Host header. Returns null for hosts that are not under the preview domain (the API's),
 * so only those ever reach the /v1 and /_admin routes. The id may come with or without its `sbx_`
 * prefix (the SDK README shows `3000-01hxyz….sbx.orkestr.run`).
 */
export function matchPreviewHost(hostHeader: string | undefined): PreviewHostMatch | null {
  if (!hostHeader) return null;
  let host = hostHeader.trim().toLowerCase();
  // A port is any trailing ":digits"; IPv6 literals ("[::1]:8787") never end in the preview domain.
  host = host.replace(/:\d*$/, "").replace(/\.$/, "");
  const suffix = `.${PREVIEW_DOMAIN}`;
  if (!host.endsWith(suffix)) return null;
  const m = host.slice(0, -suffix.length).match(LABEL);
  if (!m) return { kind: "invalid" };
  const port = Number(m[1]);
  if (port > 65_535) return { kind: "invalid" };
  const id = m[2]!.startsWith("sbx_") ? m[2]! : `sbx_${m[2]}`;
  return { kind: "preview", port, sandboxId: id };
}

import net from "node:net";
import { splitHost } from "../../../lib/host-policy.js";
import type { EngineConfig } from "../config.js";

/**
 * DNS rebinding defence. A web page on evil.test can point its own name at 127.0.0.1 and then talk
 * to the engine as a same-origin site; its requests still say `Host: evil.test[:port]`. So the API
 * (/v1, /_admin, /healthz and everything else that is not a preview) only answers the engine's own
 * names: 127.0.0.1, localhost and [::1] with the port it is bound to, the address it listens on, and
 * ORKESTR_ENGINE_ALLOWED_HOSTS. Preview hosts (*.sbx.localhost) are matched separately, before this.
 */

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** The bound address as a Host name, when it is one address (not 0.0.0.0 or ::). */
function boundName(address: string): string | null {
  const a = address.trim().toLowerCase();
  if (!a || a === "0.0.0.0" || a === "::" || a === "[::]") return null;
  return net.isIPv6(a) ? `[${a}]` : a;
}

/** Whether an API request with this Host header value (or absolute-form authority) is for us. */
export function apiHostAllowed(config: Pick<EngineConfig, "port" | "host" | "allowedHosts">, host: string): boolean {
  // The console's Host parser (lowercase name, "[v6]" bracketed, port without leading zeros).
  const parsed = splitHost(host);
  if (!parsed) return false;
  // The engine speaks plain HTTP: a Host without a port means port 80.
  const port = parsed.port ?? "80";
  const own = [...LOOPBACK_NAMES, boundName(config.host)];
  // Our own names only with the port we are bound to (config.port is the bound one from onListen):
  // "localhost" alone is what a proxy on port 80 in front of us sends, and that proxy's name
  // belongs in ORKESTR_ENGINE_ALLOWED_HOSTS.
  if (port === String(config.port) && own.includes(parsed.hostname)) return true;
  return config.allowedHosts.some((entry) => {
    const allowed = splitHost(entry);
    if (!allowed) return false;
    return allowed.hostname === parsed.hostname && (allowed.port === null || allowed.port === port);
  });
}

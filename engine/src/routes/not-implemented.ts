import type { FastifyInstance } from "fastify";
import { ApiError } from "../errors.js";

/**
 * Contract resources the local engine does not serve yet answer 501 not_implemented with a clear
 * message rather than a silent fake (contract §3.16.5).
 */
const PENDING: [string, string][] = [
  ["/sandboxes/:id/snapshots", "Named snapshots"],
  ["/snapshots", "Snapshots"],
  ["/snapshots/*", "Snapshots"],
  ["/volumes", "Volumes"],
  ["/volumes/*", "Volumes"],
  ["/templates", "Custom templates"],
  ["/templates/*", "Custom templates"],
  ["/webhooks", "Webhooks"],
  ["/webhooks/*", "Webhooks"],
  ["/sandboxes/:id/previews/:port", "Preview URLs"],
  ["/sandboxes/:id/preview-token", "Preview tokens"],
  ["/sandboxes/usage", "Usage reports"],
  ["/usage", "Usage reports"],
];

export function notImplementedRoutes(app: FastifyInstance): void {
  for (const [url, what] of PENDING) {
    app.all(url, async () => {
      throw new ApiError("not_implemented", `${what} are not implemented by the local engine yet`);
    });
  }
}

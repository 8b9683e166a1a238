import type { InjectOptions } from "fastify";
import { startInProcessEngine, type InProcessEngine } from "../../src/in-process.js";

/**
 * The in-process test layer: the real engine app and services on a temp data dir, driven through
 * `app.inject()` (no socket, no engine process, no sandbox unless a test asks for one). For route
 * logic (validation, errors, auth, paging); isolation and contract behaviour stay with the
 * real-process suites (helpers/engine.ts).
 */
export interface Injected {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely typed JSON
  body: any;
  text: string;
}

export interface InjectEngine extends InProcessEngine {
  /** A request with the engine's token (or `token`; null sends none). JSON bodies are encoded. */
  call(
    method: InjectOptions["method"],
    url: string,
    body?: unknown,
    opts?: { token?: string | null; headers?: Record<string, string> },
  ): Promise<Injected>;
}

export async function injectEngine(env: Record<string, string> = {}): Promise<InjectEngine> {
  const e = await startInProcessEngine(env);
  return {
    ...e,
    async call(method, url, body, opts = {}) {
      const token = opts.token === undefined ? e.token : opts.token;
      const headers: Record<string, string> = { ...opts.headers };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined && !headers["content-type"]) headers["content-type"] = "application/json";
      const r = await e.engine.app.inject({
        method,
        url,
        headers,
        payload: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      let parsed: unknown = null;
      try {
        parsed = r.body ? JSON.parse(r.body) : null;
      } catch {
        parsed = null;
      }
      return { status: r.statusCode, headers: r.headers, body: parsed, text: r.body };
    },
  };
}

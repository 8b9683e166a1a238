import type { EngineHandle } from "./engine.js";

/** Test helpers for custom templates: wait for a build, read its log stream. */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read loosely typed JSON
export type Json = any;

/** Polls GET /templates/{id} until the build is ready or failed. */
export async function waitBuilt(e: EngineHandle, id: string, ms = 60_000): Promise<Json> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await e.api("GET", `/templates/${id}`);
    if (r.status !== 200) throw new Error(`GET template ${id}: ${r.status} ${r.text}`);
    if (r.body.status === "ready" || r.body.status === "failed") return r.body;
    if (Date.now() > end) throw new Error(`template ${id} still ${r.body.status} after ${ms} ms\n${e.log()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** Starts a build and asserts the 202. */
export async function createTemplate(e: EngineHandle, body: Record<string, unknown>): Promise<Json> {
  const r = await e.api("POST", "/templates", { base_image: "debian-12", steps: [], ...body });
  if (r.status !== 202) throw new Error(`template create failed: ${r.status} ${r.text}\n${e.log()}`);
  return r.body;
}

/**
 * Follows a build log over SSE until the final frame (or `ms`), returning every frame parsed,
 * the raw text and whether the server ended the stream itself.
 */
export async function followLogs(
  e: EngineHandle,
  id: string,
  query = "",
  ms = 30_000,
): Promise<{ frames: Json[]; raw: string; ended: boolean }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  const r = await fetch(`${e.url}/templates/${id}/logs?follow=true${query ? `&${query}` : ""}`, {
    headers: { authorization: `Bearer ${e.token}`, accept: "text/event-stream" },
    signal: ctrl.signal,
  });
  if (r.status !== 200) throw new Error(`follow ${id}: ${r.status} ${await r.text()}`);
  const frames: Json[] = [];
  let raw = "";
  let ended = false;
  try {
    const decoder = new TextDecoder();
    for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
      raw += decoder.decode(chunk, { stream: true });
    }
    ended = true;
  } catch {
    /* aborted by the timer */
  } finally {
    clearTimeout(timer);
  }
  for (const line of raw.split("\n")) if (line.startsWith("data: ")) frames.push(JSON.parse(line.slice(6)));
  return { frames, raw, ended };
}

/** What build step `step` printed (stdout and stderr, in order), from the template's log. */
export async function stepOutput(e: EngineHandle, id: string, step: number): Promise<string> {
  const lines = (await e.api("GET", `/templates/${id}/logs?limit=1000`)).body.lines as Json[];
  return lines
    .filter((l) => l.step_index === step && l.stream !== "system")
    .map((l) => l.data)
    .join("");
}

import { decodeBase64, utf8Encode } from "./base64";
import { OrkestrConnectionError, OrkestrError, OrkestrParseError, readableDetail } from "./errors";
// Types only: the browser core (lib/api) reads streams with this module, and zod must not load there.
import type { ExecChunk } from "./schemas/exec";

/**
 * Tolerant stream reading (exec/stream, and events and template logs with `?follow=true`): one
 * parser for SSE and NDJSON. Lines are read as UTF-8 (characters split across network chunks are
 * reassembled); blank lines and `:` comments (keepalives) are skipped; an optional `data:` prefix
 * is stripped; `id:` and `event:` lines are remembered; every payload is JSON-parsed. Multi-line
 * SSE `data:` fields are joined as SSE says.
 */

export interface StreamFrame {
  /** The parsed JSON payload. */
  data: unknown;
  /** The payload text as received. */
  text: string;
  /** SSE `event:` name, when given. */
  event?: string;
  /** SSE `id:` (the last one seen, as SSE's "last event id"), when given. */
  id?: string;
}

export interface ParseStreamOptions {
  signal?: AbortSignal;
  /** For error messages: where the stream came from. */
  source?: string;
  /** Longest accepted line, in characters. Default 16 MiB. */
  maxLineLength?: number;
}

const MAX_LINE = 16 * 1024 * 1024;

/** Lines of a UTF-8 byte stream; `\n`, `\r\n` and `\r` all end a line. Cancels the body on early exit. */
export async function* readLines(
  body: ReadableStream<Uint8Array>,
  options: ParseStreamOptions = {},
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  const max = options.maxLineLength ?? MAX_LINE;
  const source = options.source ?? "the orkestr API";
  let buffer = "";
  let finished = false;
  let skipLf = false;
  const onAbort = () => void reader.cancel().catch(() => undefined);
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      if (options.signal?.aborted) return;
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (options.signal?.aborted) return;
        throw new OrkestrConnectionError({
          baseUrl: source,
          cause: e,
          detail: `The stream from ${source} broke off before it ended. Try again.`,
        });
      }
      if (chunk.done) {
        finished = true;
        buffer += decoder.decode();
        if (buffer) yield buffer;
        return;
      }
      buffer += decoder.decode(chunk.value, { stream: true });
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10 && skipLf && i === start) {
          // The \n of a \r\n split across two chunks.
          start = i + 1;
          skipLf = false;
          continue;
        }
        skipLf = false;
        if (c === 10 || c === 13) {
          yield buffer.slice(start, i);
          if (c === 13) {
            if (i + 1 < buffer.length) {
              if (buffer.charCodeAt(i + 1) === 10) i++;
            } else skipLf = true;
          }
          start = i + 1;
        }
      }
      buffer = buffer.slice(start);
      if (buffer.length > max) {
        throw new OrkestrParseError({
          baseUrl: source,
          upstreamStatus: 200,
          problem: `a stream line is longer than ${max} characters`,
          excerpt: buffer.slice(0, 200),
        });
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** SSE or NDJSON frames with JSON payloads. Throws OrkestrParseError on a payload that is not JSON. */
export async function* parseStream(
  body: ReadableStream<Uint8Array>,
  options: ParseStreamOptions = {},
): AsyncGenerator<StreamFrame, void, undefined> {
  const source = options.source ?? "the orkestr API";
  let dataLines: string[] = [];
  let event: string | undefined;
  let lastId: string | undefined;

  const frame = (text: string): StreamFrame | null => {
    const trimmed = text.trim();
    if (!trimmed || trimmed === "[DONE]") return null;
    let data: unknown;
    try {
      data = JSON.parse(trimmed);
    } catch (e) {
      throw new OrkestrParseError({
        baseUrl: source,
        upstreamStatus: 200,
        problem: "a stream frame is not JSON",
        excerpt: trimmed.slice(0, 200),
        cause: e,
      });
    }
    const f: StreamFrame = { data, text: trimmed };
    if (event !== undefined) f.event = event;
    if (lastId !== undefined) f.id = lastId;
    return f;
  };
  /** Dispatches the pending SSE event, if any. */
  const flush = (): StreamFrame | null => {
    if (!dataLines.length) {
      event = undefined;
      return null;
    }
    const f = frame(dataLines.join("\n"));
    dataLines = [];
    event = undefined;
    return f;
  };
  const completesJson = (lines: string[]) => {
    try {
      JSON.parse(lines.join("\n"));
      return true;
    } catch {
      return false;
    }
  };

  for await (const line of readLines(body, options)) {
    if (line === "" || /^\s+$/.test(line)) {
      const f = flush();
      if (f) yield f;
      continue;
    }
    if (line.startsWith(":")) continue;
    const field = /^(data|id|event|retry)(?::\s?|$)(.*)$/.exec(line);
    if (field) {
      const [, name, value = ""] = field;
      if (name === "data") {
        // A server that omits the blank line between events: a complete JSON payload followed by
        // another data line is two events, not one.
        if (dataLines.length && completesJson(dataLines)) {
          const f = flush();
          if (f) yield f;
        }
        dataLines.push(value);
      } else if (name === "id") {
        if (!value.includes("\0")) lastId = value;
      } else if (name === "event") {
        event = value;
      }
      continue;
    }
    // NDJSON (or a bare JSON line inside SSE): one frame per line.
    const pending = flush();
    if (pending) yield pending;
    const f = frame(line);
    if (f) yield f;
  }
  const f = flush();
  if (f) yield f;
}

/** `is_final`, `finished`, or an `exit_code` without a `stream` ends the stream. */
export function isTerminalFrame(data: unknown): boolean {
  if (!data || typeof data !== "object" || Array.isArray(data)) return false;
  const o = data as Record<string, unknown>;
  if (o.is_final === true || o.finished === true) return true;
  return "exit_code" in o && o.exit_code !== undefined && (o.stream === undefined || o.stream === null);
}

/** Frames up to and including the terminal one; the body is released right after it. */
export async function* untilTerminal(frames: AsyncIterable<StreamFrame>): AsyncGenerator<StreamFrame, void, undefined> {
  for await (const f of frames) {
    yield f;
    if (isTerminalFrame(f.data)) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Exec streams

export type ExecStreamName = "stdout" | "stderr" | (string & {});

/** What `client.exec.stream()` yields. */
export type ExecStreamEvent =
  | {
      type: "output";
      stream: ExecStreamName;
      /** Text, decoded with a streaming UTF-8 decoder per stream (multi-byte characters split across chunks are kept whole). */
      data: string;
      /** The chunk's bytes (base64 chunks decoded). */
      bytes: Uint8Array;
      encoding: "utf8" | "base64";
    }
  | { type: "exit"; exit_code: number | null; duration_ms: number | null; timed_out: boolean; raw: ExecChunk }
  | { type: "error"; error: OrkestrError; raw: unknown }
  | { type: "unknown"; raw: unknown };

/**
 * Turns raw frames into exec events. Never throws for trouble inside the stream: a broken
 * connection, an unreadable frame, an error frame or a stream that ends without its final frame
 * all become one last `{type:"error"}` event.
 */
export async function* execEvents(
  frames: AsyncIterable<StreamFrame>,
  options: { source?: string; signal?: AbortSignal } = {},
): AsyncGenerator<ExecStreamEvent, void, undefined> {
  const source = options.source ?? "the orkestr API";
  const decoders = new Map<string, InstanceType<typeof TextDecoder>>();
  const decode = (stream: string, bytes: Uint8Array) => {
    let d = decoders.get(stream);
    if (!d) decoders.set(stream, (d = new TextDecoder("utf-8")));
    return d.decode(bytes, { stream: true });
  };
  const output = (stream: string, data: string, encoding: string | null | undefined): ExecStreamEvent => {
    if (encoding === "base64") {
      let bytes: Uint8Array;
      try {
        bytes = decodeBase64(data);
      } catch (e) {
        return {
          type: "error",
          error: new OrkestrParseError({
            baseUrl: source,
            upstreamStatus: 200,
            problem: `a ${stream} chunk says base64 but is not`,
            excerpt: data.slice(0, 200),
            cause: e,
          }),
          raw: data,
        };
      }
      return { type: "output", stream, data: decode(stream, bytes), bytes, encoding: "base64" };
    }
    const bytes = utf8Encode(data);
    return { type: "output", stream, data: decode(stream, bytes), bytes, encoding: "utf8" };
  };

  try {
    for await (const f of frames) {
      const c = readExecChunk(f.data);
      if (!c) {
        yield { type: "unknown", raw: f.data };
        continue;
      }
      const terminal = isTerminalFrame(f.data);
      const hasError = c.error !== undefined && c.error !== null && c.error !== false;
      if (typeof c.stream === "string" && typeof c.data === "string") {
        const ev = output(c.stream, c.data, c.encoding);
        yield ev;
        if (ev.type === "error") return;
      } else if (typeof c.stdout === "string" || typeof c.stderr === "string") {
        if (typeof c.stdout === "string") yield output("stdout", c.stdout, c.encoding);
        if (typeof c.stderr === "string") yield output("stderr", c.stderr, c.encoding);
      } else if (!terminal && !hasError) {
        yield { type: "unknown", raw: f.data };
        continue;
      }
      if (hasError && (terminal || c.stream === undefined || c.stream === null)) {
        yield { type: "error", error: streamError(c.error, c.code, source), raw: f.data };
        return;
      }
      if (terminal) {
        yield {
          type: "exit",
          exit_code: c.exit_code ?? null,
          duration_ms: c.duration_ms ?? null,
          timed_out: c.timed_out ?? false,
          raw: c,
        };
        return;
      }
    }
  } catch (e) {
    if (options.signal?.aborted) return;
    const error = e instanceof OrkestrError ? e : new OrkestrConnectionError({ baseUrl: source, cause: e });
    yield { type: "error", error, raw: null };
    return;
  }
  if (options.signal?.aborted) return;
  yield {
    type: "error",
    error: new OrkestrConnectionError({
      baseUrl: source,
      detail: `The exec stream from ${source} ended before the command finished (no final frame). The command may still be running; check the sandbox's activity.`,
    }),
    raw: null,
  };
}

const CHUNK_FIELD_TYPES: Record<string, "string" | "boolean" | "int"> = {
  stream: "string",
  data: "string",
  encoding: "string",
  stdout: "string",
  stderr: "string",
  is_final: "boolean",
  finished: "boolean",
  exit_code: "int",
  timed_out: "boolean",
};

/**
 * A frame read as the ExecChunk schema (lib/orkestr/schemas/exec.ts) reads it, or null when a
 * field has the wrong type. Written out rather than `ExecChunk.safeParse` so the browser core can
 * share this reader without loading zod; schemas.test.ts checks both agree.
 */
export function readExecChunk(data: unknown): ExecChunk | null {
  if (!data || typeof data !== "object" || Array.isArray(data)) return null;
  const o = data as Record<string, unknown>;
  for (const [field, type] of Object.entries(CHUNK_FIELD_TYPES)) {
    const v = o[field];
    if (v === undefined || v === null) continue;
    if (type === "int" ? !Number.isInteger(v) : typeof v !== type) return null;
  }
  const d = o.duration_ms;
  if (d === undefined || d === null || typeof d === "number") return o as ExecChunk;
  if (typeof d === "string" && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(d))
    return { ...o, duration_ms: Number(d) } as ExecChunk;
  return null;
}

const KNOWN_STREAM_ERROR_STATUS: Record<string, number> = {
  sandbox_agent_unreachable: 502,
  sandbox_not_running: 409,
  sandbox_paused: 409,
  sandbox_terminated: 410,
  upstream_timeout: 504,
};

/** An error frame inside a started exec stream: `{"is_final":true,"error":"…","code":"…"}`. */
export function streamError(error: unknown, code: unknown, source: string): OrkestrError {
  const nested = error && typeof error === "object" ? (error as Record<string, unknown>) : null;
  const c =
    (typeof code === "string" && code) || (nested && typeof nested.code === "string" && nested.code) || "stream_error";
  const detail = readableDetail(error) || `The stream from ${source} reported an error.`;
  return new OrkestrError({ status: KNOWN_STREAM_ERROR_STATUS[c] ?? 502, code: c, detail, raw: error });
}

// ---------------------------------------------------------------------------------------------
// Passthrough for proxies (Baton's route handlers: the upstream body unbuffered)

/** Headers a proxy must set on a streamed body so nothing buffers it. */
export const STREAM_RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-cache",
  "X-Accel-Buffering": "no",
};

const FORWARDED = [
  "content-type",
  "retry-after",
  "x-next-cursor",
  "x-next-token",
  "content-length",
  "content-range",
  "accept-ranges",
  "content-disposition",
  "last-modified",
];

/** The upstream headers worth forwarding (never auth or cookies), plus the no-buffering pair. */
export function passthroughHeaders(upstream: Response, extra: Record<string, string> = {}): Headers {
  const h = new Headers();
  for (const name of FORWARDED) {
    const v = upstream.headers.get(name);
    if (v !== null) h.set(name, v);
  }
  for (const [k, v] of Object.entries(STREAM_RESPONSE_HEADERS)) h.set(k, v);
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  return h;
}

/** A Response that streams the upstream body through unbuffered, with its status. */
export function passthrough(upstream: Response, extra: Record<string, string> = {}): Response {
  return new Response(upstream.body, { status: upstream.status, headers: passthroughHeaders(upstream, extra) });
}

/** One SSE frame (`id:`/`event:` optional). */
export function encodeSse(data: unknown, options: { id?: string; event?: string } = {}): string {
  let out = "";
  if (options.id !== undefined) out += `id: ${options.id.replace(/[\r\n]/g, "")}\n`;
  if (options.event !== undefined) out += `event: ${options.event.replace(/[\r\n]/g, "")}\n`;
  return `${out}data: ${JSON.stringify(data)}\n\n`;
}

/** One NDJSON line. */
export function encodeNdjson(data: unknown): string {
  return `${JSON.stringify(data)}\n`;
}

/** Re-encodes frames as an SSE byte stream (e.g. after filtering them in a proxy). */
export function framesToSse(frames: AsyncIterable<StreamFrame>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const it = frames[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done) return controller.close();
      const { data, id, event } = next.value;
      controller.enqueue(
        encoder.encode(
          encodeSse(data, { ...(id !== undefined ? { id } : {}), ...(event !== undefined ? { event } : {}) }),
        ),
      );
    },
    async cancel() {
      await it.return?.();
    },
  });
}

import { afterEach, describe, expect, it, vi } from "vitest";
import {
  OrkestrAbortError,
  OrkestrConnectionError,
  OrkestrError,
  OrkestrParseError,
  errorText,
} from "../orkestr/errors";
import { path } from "../orkestr/path";
import type { ExecStreamEvent } from "../orkestr/stream";
import { terminalApi } from "../queries/terminal";
import { apiAll, apiJson, apiPage, apiSend, apiVoid } from "./core";
import { apiStream } from "./stream";
import { arrayOf, object } from "./read";

// The browser core against a stubbed global fetch: what it sends, how it reads answers, lists,
// streams and failures. The same wire pieces as lib/orkestr (path tag, list reading, stream parser,
// error classes), so these also pin that the browser reads Baton's API as the server reads orkestr.

type Call = { url: string; init: RequestInit };
const calls: Call[] = [];

function stub(...answers: (Response | Error | (() => Response))[]) {
  calls.length = 0;
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, init });
      const next = answers.shift();
      if (!next) throw new Error("no more answers");
      if (next instanceof Error) throw next;
      return typeof next === "function" ? next() : next;
    }),
  );
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** A body that arrives one byte at a time (frames split everywhere). */
function trickle(text: string): Response {
  const bytes = new TextEncoder().encode(text);
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < bytes.length) c.enqueue(bytes.subarray(i, ++i));
        else c.close();
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );
}

const readThing = object<{ id: string; n?: number }>({ id: "string" }, { n: "number" });

afterEach(() => vi.unstubAllGlobals());

describe("requests", () => {
  it("builds the URL with the path tag and the query builder, sends JSON with the session cookie", async () => {
    stub(json({ id: "a/b" }));
    await apiJson(
      { method: "POST", path: path`/api/v1/things/${"a/b"}`, query: { x: 1, skip: undefined }, body: { k: "v" } },
      readThing,
    );
    expect(calls[0]!.url).toBe("/api/v1/things/a%2Fb?x=1");
    expect(calls[0]!.init).toMatchObject({ method: "POST", body: '{"k":"v"}', credentials: "same-origin" });
    expect(calls[0]!.init.headers).toMatchObject({ "content-type": "application/json", accept: "application/json" });
  });

  it("refuses ids that would climb out of their resource before anything is sent", () => {
    expect(() => path`/api/v1/sandboxes/${".."}`).toThrow(OrkestrError);
  });
});

describe("answers are checked", () => {
  it("returns what the reader accepts, extra fields kept", async () => {
    stub(json({ id: "x", n: 2, extra: true }));
    await expect(apiJson({ path: "/api/x" }, readThing)).resolves.toEqual({ id: "x", n: 2, extra: true });
  });

  it("a body of the wrong shape is an OrkestrParseError naming the field, not a cast", async () => {
    stub(json({ id: 7 }));
    const err = await apiJson({ path: "/api/x" }, readThing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OrkestrParseError);
    expect((err as OrkestrError).detail).toMatch(
      /^The Baton server sent a response Baton could not read: id: expected string, got number/,
    );
  });

  it("a body that is not JSON is an OrkestrParseError", async () => {
    stub(new Response("<html>oops</html>", { status: 200 }));
    await expect(apiJson({ path: "/api/x" }, readThing)).rejects.toBeInstanceOf(OrkestrParseError);
  });

  it("arrayOf names the item that does not fit", () => {
    expect(() => arrayOf(readThing)([{ id: "a" }, { id: null }])).toThrow(/item 1: id: expected string, got null/);
  });

  it("apiVoid ignores the body of a 202 or 204", async () => {
    stub(new Response(null, { status: 204 }));
    await expect(apiVoid({ method: "DELETE", path: "/api/x" })).resolves.toBeUndefined();
  });
});

describe("failures are the error classes the server side uses", () => {
  it("Baton's { detail, code, field, errors } and Retry-After", async () => {
    stub(
      json(
        {
          detail: "That name is taken.",
          code: "connection_name_taken",
          field: "name",
          errors: { token: "Too short." },
        },
        409,
        {
          "retry-after": "3",
        },
      ),
    );
    const err = (await apiJson({ path: "/api/connections" }, readThing).catch((e: unknown) => e)) as OrkestrError;
    expect(err).toBeInstanceOf(OrkestrError);
    expect([err.status, err.code, err.detail, err.retryAfterSeconds]).toEqual([
      409,
      "connection_name_taken",
      "That name is taken.",
      3,
    ]);
    expect(err.forField("name")).toBe("That name is taken.");
    expect(err.forField("token")).toBe("Too short.");
    expect(err.forField("base_url")).toBeNull();
    expect(errorText(err)).toBe("That name is taken.");
  });

  it("an answer that is not Baton's JSON (a proxy's HTML page) still reads as one sentence with its status", async () => {
    stub(
      new Response("<html><title>502 Bad Gateway</title></html>", {
        status: 502,
        statusText: "Bad Gateway",
        headers: { "content-type": "text/html" },
      }),
    );
    const err = (await apiSend({ path: "/api/x" }).catch((e: unknown) => e)) as OrkestrError;
    expect([err.status, err.code, err.detail]).toEqual([
      502,
      "bad_gateway",
      "The Baton server answered 502 Bad Gateway. Try again in a moment.",
    ]);
  });

  it("no answer is an OrkestrConnectionError; a cancelled call an OrkestrAbortError", async () => {
    stub(new TypeError("Failed to fetch"));
    const down = (await apiSend({ path: "/api/x" }).catch((e: unknown) => e)) as OrkestrError;
    expect(down).toBeInstanceOf(OrkestrConnectionError);
    expect(down.detail).toBe("Could not reach the Baton server. Check your connection and try again.");

    const controller = new AbortController();
    controller.abort();
    stub(new DOMException("aborted", "AbortError"));
    await expect(apiSend({ path: "/api/x", signal: controller.signal })).rejects.toBeInstanceOf(OrkestrAbortError);
  });
});

describe("lists", () => {
  it("reads a page with X-Next-Cursor, each item checked", async () => {
    stub(json([{ id: "a" }, { id: "b" }], 200, { "x-next-cursor": "c2" }));
    await expect(apiPage({ path: "/api/v1/things" }, readThing)).resolves.toEqual({
      items: [{ id: "a" }, { id: "b" }],
      nextCursor: "c2",
    });
  });

  it("reads the other list shapes lib/orkestr accepts ({ items, next_cursor })", async () => {
    stub(json({ items: [{ id: "a" }], next_cursor: "n" }));
    await expect(apiPage({ path: "/api/v1/things" }, readThing)).resolves.toEqual({
      items: [{ id: "a" }],
      nextCursor: "n",
    });
  });

  it("apiAll follows the cursor with limit, stops at the last page, a repeated cursor or maxPages", async () => {
    stub(
      json([{ id: "a" }], 200, { "x-next-cursor": "c2" }),
      json([{ id: "b" }], 200, { "x-next-cursor": "c3" }),
      json([{ id: "c" }]),
    );
    await expect(apiAll({ path: "/api/v1/things", query: { q: "x" } }, readThing)).resolves.toEqual([
      { id: "a" },
      { id: "b" },
      { id: "c" },
    ]);
    expect(calls.map((c) => c.url)).toEqual([
      "/api/v1/things?q=x&limit=100",
      "/api/v1/things?q=x&limit=100&cursor=c2",
      "/api/v1/things?q=x&limit=100&cursor=c3",
    ]);

    stub(...Array.from({ length: 5 }, (_, i) => json([{ id: String(i) }], 200, { "x-next-cursor": `c${i + 1}` })));
    await expect(apiAll({ path: "/api/v1/things" }, readThing, { maxPages: 2 })).resolves.toHaveLength(2);
    expect(calls).toHaveLength(2);
  });
});

describe("streams", () => {
  const sse =
    'data: {"stream":"stdout","data":"out\\n"}\n\n: keepalive\n\ndata: {"stream":"stderr","data":"ZXJy","encoding":"base64"}\n\ndata: {"is_final":true,"exit_code":3,"duration_ms":5}\n\n';

  it("apiStream reads SSE frames however the body is split", async () => {
    stub(trickle(sse));
    const frames = [];
    for await (const f of apiStream({ method: "POST", path: "/api/x/stream" })) frames.push(f.data);
    expect(frames).toHaveLength(3);
    expect(calls[0]!.init.headers).toMatchObject({ accept: "text/event-stream, application/x-ndjson" });
  });

  it("line mode's exec stream: output by stream, then the exit, from SSE or NDJSON alike", async () => {
    for (const body of [sse, sse.replace(/data: /g, "").replace(/\n\n/g, "\n")]) {
      stub(trickle(body));
      const events: ExecStreamEvent[] = [];
      const signal = new AbortController().signal;
      for await (const e of terminalApi.execStream("sbx_1", { command: "x" }, signal)) events.push(e);
      expect(events.map((e) => (e.type === "output" ? [e.stream, e.data] : [e.type]))).toEqual([
        ["stdout", "out\n"],
        ["stderr", "err"],
        ["exit"],
      ]);
      expect(events.at(-1)).toMatchObject({ type: "exit", exit_code: 3 });
      expect(calls[0]!.url).toBe("/api/v1/sandboxes/sbx_1/exec/stream");
    }
  });

  it("a refusal before the stream starts, an error frame, or a stream cut short end in one error event", async () => {
    const signal = new AbortController().signal;
    const last = async () => {
      let end: ExecStreamEvent | undefined;
      for await (const e of terminalApi.execStream("sbx_1", { command: "x" }, signal)) end = e;
      return end;
    };
    stub(json({ detail: "The sandbox is paused.", code: "sandbox_paused" }, 409));
    expect(await last()).toMatchObject({ type: "error", error: { status: 409, detail: "The sandbox is paused." } });
    stub(trickle('data: {"is_final":true,"error":"agent gone","code":"sandbox_agent_unreachable"}\n\n'));
    expect(await last()).toMatchObject({ type: "error", error: { code: "sandbox_agent_unreachable" } });
    stub(trickle('data: {"stream":"stdout","data":"x"}\n\n'));
    expect(await last()).toMatchObject({
      type: "error",
      error: { detail: expect.stringMatching(/ended before the command finished/) },
    });
  });
});

describe("the browser core loads no zod", () => {
  it("no module it or lib/queries imports at runtime imports zod", async () => {
    const fs = await import("node:fs");
    const nodePath = await import("node:path");
    const root = nodePath.resolve(import.meta.dirname, "..");
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = fs.readFileSync(file, "utf8");
      for (const m of code.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)) {
        const [, typeOnly, spec] = m;
        if (typeOnly) continue;
        if (spec === "zod" || spec!.startsWith("zod/")) offenders.push(nodePath.relative(root, file));
        if (!spec!.startsWith(".")) continue;
        const target = nodePath.resolve(nodePath.dirname(file), spec!).replace(/\.js$/, "");
        for (const ext of [".ts", ".tsx"]) if (fs.existsSync(target + ext)) visit(target + ext);
      }
    };
    for (const f of fs.readdirSync(nodePath.join(root, "queries")))
      if (/\.tsx?$/.test(f) && !f.includes(".test.")) visit(nodePath.join(root, "queries", f));
    expect(seen.size).toBeGreaterThan(15);
    expect(offenders).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { encodeBase64 } from "./base64";
import { createOrkestrClient } from "./core";
import { OrkestrConnectionError, OrkestrParseError } from "./errors";
import {
  encodeNdjson,
  encodeSse,
  execEvents,
  framesToSse,
  isTerminalFrame,
  parseStream,
  passthrough,
  readLines,
  untilTerminal,
  type ExecStreamEvent,
  type StreamFrame,
} from "./stream";
import { EXEC_STREAM_ERROR_FRAME, EXEC_STREAM_FOREIGN, EXEC_STREAM_SSE } from "./testing/contract-examples";
import { apiError, chunked, fakeFetch, json, streamResponse } from "./testing/fake-fetch";

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
const frames = (chunks: (string | Uint8Array)[]) => collect(parseStream(chunked(chunks)));
const data = async (chunks: (string | Uint8Array)[]) => (await frames(chunks)).map((f) => f.data);
const exec = (chunks: (string | Uint8Array)[]) => collect(execEvents(parseStream(chunked(chunks))));
const enc = new TextEncoder();

describe("readLines", () => {
  it("splits on \\n, \\r\\n and \\r, also across chunks", async () => {
    expect(await collect(readLines(chunked(["a\nb\r\nc\rd", "\r", "\ne\n", "f"])))).toEqual([
      "a",
      "b",
      "c",
      "d",
      "e",
      "f",
    ]);
  });

  it("reassembles UTF-8 characters split across chunks", async () => {
    const bytes = enc.encode("héllo ✓ 🚀\n");
    const parts = [bytes.slice(0, 2), bytes.slice(2, 9), bytes.slice(9, 12), bytes.slice(12)];
    expect(await collect(readLines(chunked(parts)))).toEqual(["héllo ✓ 🚀"]);
  });

  it("refuses an endless line", async () => {
    await expect(collect(readLines(chunked(["x".repeat(100)]), { maxLineLength: 10 }))).rejects.toBeInstanceOf(
      OrkestrParseError,
    );
  });

  it("turns a broken body into an OrkestrConnectionError", async () => {
    let n = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ === 0) c.enqueue(enc.encode("a\n"));
        else c.error(new Error("socket hang up"));
      },
    });
    await expect(collect(readLines(body))).rejects.toBeInstanceOf(OrkestrConnectionError);
  });
});

describe("parseStream (SSE and NDJSON)", () => {
  it("reads the contract's SSE example, skipping keepalives", async () => {
    expect(await data(EXEC_STREAM_SSE)).toEqual([
      { stream: "stdout", data: "step 1\n" },
      { stream: "stderr", data: "warning: ...\n" },
      { is_final: true, exit_code: 0, duration_ms: 5234, timed_out: false },
    ]);
  });

  it("reads NDJSON, with blank keepalive lines", async () => {
    expect(
      await data([
        '{"stream":"stdout","data":"a"}\n',
        "\n",
        '{"stream":"stdout","data":"b"}\n{"is_final":true,"exit_code":0}\n',
      ]),
    ).toEqual([
      { stream: "stdout", data: "a" },
      { stream: "stdout", data: "b" },
      { is_final: true, exit_code: 0 },
    ]);
  });

  it("handles frames split anywhere, including inside the data: prefix and the JSON", async () => {
    const whole = EXEC_STREAM_SSE.join("");
    const chunks: string[] = [];
    for (let i = 0; i < whole.length; i += 7) chunks.push(whole.slice(i, i + 7));
    expect(await data(chunks)).toEqual(await data(EXEC_STREAM_SSE));
    const bytes = enc.encode(whole);
    expect(await data(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(await data(EXEC_STREAM_SSE));
  });

  it("accepts data: with or without the space, CRLF line ends and a missing final newline", async () => {
    expect(await data(['data:{"a":1}\r\n\r\ndata: {"a":2}\r\n\r\n', 'data: {"a":3}'])).toEqual([
      { a: 1 },
      { a: 2 },
      { a: 3 },
    ]);
  });

  it("remembers id: and event: lines", async () => {
    const f = await frames([
      'id: 7\nevent: exec\ndata: {"type":"exec"}\n\n',
      'data: {"type":"file.write"}\n\n',
      'id: 9\ndata: {"x":1}\n\n',
    ]);
    expect(f.map((x) => [x.id, x.event])).toEqual([
      ["7", "exec"],
      ["7", undefined],
      ["9", undefined],
    ]);
  });

  it("joins multi-line data fields", async () => {
    expect(await data(['data: {"a":\ndata: 1}\n\n'])).toEqual([{ a: 1 }]);
  });

  it("splits events a server forgot to separate with a blank line", async () => {
    expect(await data(['data: {"a":1}\ndata: {"a":2}\n\n'])).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it("ignores retry: lines, comments, whitespace lines and [DONE]", async () => {
    expect(await data(["retry: 1000\n", ":comment\n", "   \n", 'data: {"a":1}\n\n', "data: [DONE]\n\n"])).toEqual([
      { a: 1 },
    ]);
  });

  it("throws OrkestrParseError on a frame that is not JSON", async () => {
    await expect(frames(["data: hello world\n\n"])).rejects.toBeInstanceOf(OrkestrParseError);
    await expect(frames(["{not json\n"])).rejects.toThrow(/a stream frame is not JSON/);
  });

  it("cancels the upstream body when the consumer stops early", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(enc.encode('{"a":1}\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const f of parseStream(body)) {
      expect(f.data).toEqual({ a: 1 });
      break;
    }
    expect(cancelled).toBe(true);
  });

  it("stops quietly when the caller's signal aborts", async () => {
    const ac = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('{"a":1}\n'));
      },
    });
    const seen: unknown[] = [];
    for await (const f of parseStream(body, { signal: ac.signal })) {
      seen.push(f.data);
      ac.abort();
    }
    expect(seen).toEqual([{ a: 1 }]);
  });
});

describe("terminal frames (`is_final`, `finished`, or `exit_code` without `stream`)", () => {
  it.each([
    [{ is_final: true }, true],
    [{ finished: true, exit_code: 0 }, true],
    [{ exit_code: 0 }, true],
    [{ exit_code: 0, stream: null }, true],
    [{ exit_code: null }, true],
    [{ stream: "stdout", data: "x", exit_code: 0 }, false],
    [{ stream: "stdout", data: "x" }, false],
    [{ is_final: false }, false],
    ["text", false],
    [null, false],
    [[1], false],
  ])("%j → %s", (frame, terminal) => {
    expect(isTerminalFrame(frame)).toBe(terminal);
  });

  it("untilTerminal stops after the final frame", async () => {
    const out = await collect(
      untilTerminal(
        parseStream(chunked(['{"stream":"stdout","data":"a"}\n{"exit_code":0}\n{"stream":"stdout","data":"late"}\n'])),
      ),
    );
    expect(out.map((f) => f.data)).toEqual([{ stream: "stdout", data: "a" }, { exit_code: 0 }]);
  });
});

describe("execEvents", () => {
  it("yields output then exit for the contract example", async () => {
    const ev = await exec(EXEC_STREAM_SSE);
    expect(ev.map((e) => e.type)).toEqual(["output", "output", "exit"]);
    expect(ev[0]).toMatchObject({ type: "output", stream: "stdout", data: "step 1\n", encoding: "utf8" });
    expect(ev[1]).toMatchObject({ type: "output", stream: "stderr", data: "warning: ...\n" });
    expect(ev[2]).toMatchObject({ type: "exit", exit_code: 0, duration_ms: 5234, timed_out: false });
  });

  it("decodes base64 chunks to bytes and text", async () => {
    const bytes = Uint8Array.of(0xff, 0x00, 0x41);
    const ev = await exec([
      `data: ${JSON.stringify({ stream: "stdout", data: encodeBase64(bytes), encoding: "base64" })}\n\n`,
      'data: {"is_final":true,"exit_code":0}\n\n',
    ]);
    const out = ev[0] as Extract<ExecStreamEvent, { type: "output" }>;
    expect(out.encoding).toBe("base64");
    expect([...out.bytes]).toEqual([0xff, 0x00, 0x41]);
    expect(out.data).toBe("\ufffd\u0000A");
  });

  it("keeps a character whole when a chunk boundary splits it (base64 chunk, then text)", async () => {
    // "✓" is e2 9c 93. Split after e2, neither half is valid UTF-8, so the engine sends both as
    // base64; the per-stream decoder joins them into one character.
    const check = enc.encode("ok ✓");
    const a = check.slice(0, 4);
    const b = check.slice(4);
    const ev = await exec([
      `${JSON.stringify({ stream: "stdout", data: encodeBase64(a), encoding: "base64" })}\n`,
      `${JSON.stringify({ stream: "stdout", data: encodeBase64(b), encoding: "base64" })}\n`,
      `${JSON.stringify({ stream: "stderr", data: "e" })}\n`,
      '{"exit_code":0}\n',
    ]);
    const text = ev
      .filter((e): e is Extract<ExecStreamEvent, { type: "output" }> => e.type === "output" && e.stream === "stdout")
      .map((e) => e.data)
      .join("");
    expect(text).toBe("ok ✓");
  });

  it("turns an error frame into a final error event", async () => {
    const ev = await exec(['data: {"stream":"stdout","data":"partial"}\n\n', `data: ${EXEC_STREAM_ERROR_FRAME}\n\n`]);
    expect(ev.map((e) => e.type)).toEqual(["output", "error"]);
    const err = (ev[1] as Extract<ExecStreamEvent, { type: "error" }>).error;
    expect(err.code).toBe("sandbox_agent_unreachable");
    expect(err.status).toBe(502);
    expect(err.detail).toBe("agent went away");
  });

  it("reads other providers' frames ({stdout}, {stderr}, finished)", async () => {
    const ev = await exec(EXEC_STREAM_FOREIGN);
    expect(ev).toMatchObject([
      { type: "output", stream: "stdout", data: "hi\n" },
      { type: "output", stream: "stderr", data: "oops\n" },
      { type: "exit", exit_code: 3 },
    ]);
    const err = await exec(['data: {"error":"boom","code":"sandbox_paused","finished":true}\n\n']);
    expect(err[0]).toMatchObject({ type: "error" });
    expect((err[0] as Extract<ExecStreamEvent, { type: "error" }>).error.status).toBe(409);
  });

  it("yields unknown frames without stopping", async () => {
    const ev = await exec(['{"type":"start","pid":12}\n', '{"stream":"stdout","data":"x"}\n', '{"exit_code":0}\n']);
    expect(ev.map((e) => e.type)).toEqual(["unknown", "output", "exit"]);
  });

  it("a frame carrying output and the final fields yields both", async () => {
    const ev = await exec(['{"stream":"stdout","data":"last","is_final":true,"exit_code":1}\n']);
    expect(ev).toMatchObject([
      { type: "output", data: "last" },
      { type: "exit", exit_code: 1 },
    ]);
  });

  it("reports a stream that ends without its final frame", async () => {
    const ev = await exec(['data: {"stream":"stdout","data":"a"}\n\n']);
    expect(ev.map((e) => e.type)).toEqual(["output", "error"]);
    expect((ev[1] as Extract<ExecStreamEvent, { type: "error" }>).error.message).toMatch(
      /ended before the command finished/,
    );
  });

  it("reports a broken frame as an error event instead of throwing", async () => {
    const ev = await exec(['data: {"stream":"stdout","data":"a"}\n\n', "data: {oops\n\n"]);
    expect(ev.map((e) => e.type)).toEqual(["output", "error"]);
    expect((ev[1] as Extract<ExecStreamEvent, { type: "error" }>).error).toBeInstanceOf(OrkestrParseError);
    const bad64 = await exec(['{"stream":"stdout","data":"@@@","encoding":"base64"}\n']);
    expect((bad64[0] as Extract<ExecStreamEvent, { type: "error" }>).error).toBeInstanceOf(OrkestrParseError);
  });
});

describe("client.exec.stream / raw", () => {
  it("streams events from /exec/stream, asking for SSE", async () => {
    const fetch = fakeFetch(() => streamResponse(EXEC_STREAM_SSE));
    const c = createOrkestrClient({ baseUrl: "http://e/v1", token: "t", fetch });
    const ev = await collect(c.exec.stream("sbx_1", { command: "python long.py", cwd: "/workspace" }));
    expect(ev.map((e) => e.type)).toEqual(["output", "output", "exit"]);
    expect(fetch.calls[0]!.path).toBe("/sandboxes/sbx_1/exec/stream");
    expect(fetch.calls[0]!.headers.get("accept")).toBe("text/event-stream");
    expect(fetch.calls[0]!.body).toEqual({ command: "python long.py", cwd: "/workspace" });
  });

  it("asks for NDJSON when told to", async () => {
    const fetch = fakeFetch(() => streamResponse(['{"exit_code":0,"is_final":true}\n'], "application/x-ndjson"));
    const c = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch });
    await collect(c.exec.stream("sbx_1", "true", { format: "ndjson" }));
    expect(fetch.calls[0]!.headers.get("accept")).toBe("application/x-ndjson");
  });

  it("falls back to POST /exec {stream:true} where /exec/stream is missing", async () => {
    const fetch = fakeFetch([
      apiError(404, "not_found", "No route POST /v1/sandboxes/sbx_1/exec/stream"),
      streamResponse(EXEC_STREAM_SSE),
    ]);
    const c = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch });
    const ev = await collect(c.exec.stream("sbx_1", "echo"));
    expect(ev.at(-1)?.type).toBe("exit");
    expect(fetch.calls.map((r) => [r.path, r.body])).toEqual([
      ["/sandboxes/sbx_1/exec/stream", { command: "echo" }],
      ["/sandboxes/sbx_1/exec", { command: "echo", stream: true }],
    ]);
  });

  it("throws errors that arrive before the stream starts", async () => {
    const fetch = fakeFetch(() => apiError(409, "sandbox_paused", "Sandbox sbx_1 is paused; resume it first"));
    const c = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch });
    await expect(collect(c.exec.stream("sbx_1", "echo"))).rejects.toMatchObject({
      code: "sandbox_paused",
      status: 409,
    });
    expect(fetch.calls).toHaveLength(1);
    const notFound = fakeFetch(() => apiError(404, "sandbox_not_found", "Sandbox sbx_x not found"));
    const c2 = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch: notFound });
    await expect(collect(c2.exec.stream("sbx_x", "echo"))).rejects.toMatchObject({ code: "sandbox_not_found" });
    expect(notFound.calls).toHaveLength(1);
  });

  it("the timeout covers only the wait for headers, not the stream", async () => {
    const body = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(enc.encode('{"stream":"stdout","data":"a"}\n'));
        await new Promise((r) => setTimeout(r, 80));
        c.enqueue(enc.encode('{"exit_code":0}\n'));
        c.close();
      },
    });
    const fetch = fakeFetch(() => new Response(body, { headers: { "Content-Type": "application/x-ndjson" } }));
    const c = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch, timeoutMs: 30 });
    const ev = await collect(c.exec.stream("sbx_1", "sleep"));
    expect(ev.map((e) => e.type)).toEqual(["output", "exit"]);
  });

  it("raw returns the upstream Response for unbuffered proxying", async () => {
    const fetch = fakeFetch(() => streamResponse(EXEC_STREAM_SSE));
    const c = createOrkestrClient({ baseUrl: "http://e", token: "t", fetch });
    const upstream = await c.exec.raw("sbx_1", "echo");
    const proxied = passthrough(upstream);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get("content-type")).toBe("text/event-stream");
    expect(proxied.headers.get("cache-control")).toBe("no-cache");
    expect(proxied.headers.get("x-accel-buffering")).toBe("no");
    expect(await proxied.text()).toBe(EXEC_STREAM_SSE.join(""));
  });
});

describe("proxy helpers", () => {
  it("passthrough forwards only safe headers", async () => {
    const upstream = json([], {
      headers: { "X-Next-Cursor": "c2", "Retry-After": "3", "Set-Cookie": "a=b", "X-Internal": "1" },
    });
    const h = passthrough(upstream).headers;
    expect(h.get("x-next-cursor")).toBe("c2");
    expect(h.get("retry-after")).toBe("3");
    expect(h.get("set-cookie")).toBeNull();
    expect(h.get("x-internal")).toBeNull();
  });

  it("encodes SSE and NDJSON frames", () => {
    expect(encodeSse({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(encodeSse({ a: 1 }, { id: "3", event: "x\ny" })).toBe('id: 3\nevent: xy\ndata: {"a":1}\n\n');
    expect(encodeNdjson({ a: 1 })).toBe('{"a":1}\n');
  });

  it("framesToSse re-encodes what parseStream reads", async () => {
    const input = ['id: 1\ndata: {"a":1}\n\n', '{"b":2}\n'];
    const roundTrip = await collect(parseStream(framesToSse(parseStream(chunked(input)))));
    expect(roundTrip.map((f: StreamFrame) => [f.data, f.id])).toEqual([
      [{ a: 1 }, "1"],
      [{ b: 2 }, "1"],
    ]);
  });
});

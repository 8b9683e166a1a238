import { describe, expect, it } from "vitest";
import { CwdMarkerFilter, wrapCommand } from "../../components/sandboxes/terminal/cwd-marker";
import { FrameLineSplitter, readExecStream, toExecFrame } from "../../components/sandboxes/terminal/exec-stream";
import { missedOutput, TailBuffer } from "../../components/sandboxes/terminal/replay";

// The terminal's pure pieces: the cwd marker of line mode, the exec stream reader, and the replay
// overlap that lets a reconnected PTY write only what it missed.

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

describe("line mode cwd marker", () => {
  it("wraps the command so the marker carries $PWD and the command's own exit status", () => {
    expect(wrapCommand("cd /tmp", "abc")).toBe(
      "cd /tmp\n__baton_s=$?; printf '\\036BATON:abc:%s\\036' \"$PWD\"; exit $__baton_s",
    );
  });

  it("strips the marker from stdout however it is split, and keeps the cwd", () => {
    const stream = "hello\nworld\n\x1eBATON:abc:/tmp/dir with space\x1e";
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const size of [1, 3, 7]) {
        const f = new CwdMarkerFilter("abc");
        let out = f.push(stream.slice(0, cut));
        for (let i = cut; i < stream.length; i += size) out += f.push(stream.slice(i, i + size));
        out += f.flush();
        expect(out).toBe("hello\nworld\n");
        expect(f.cwd).toBe("/tmp/dir with space");
      }
    }
  });

  it("leaves other record separators and other nonces alone", () => {
    const f = new CwdMarkerFilter("abc");
    expect(f.push("a\x1eb\x1eBATON:xyz:/x\x1e") + f.flush()).toBe("a\x1eb\x1eBATON:xyz:/x\x1e");
    expect(f.cwd).toBeNull();
  });
});

describe("exec stream frames", () => {
  it("reads SSE and NDJSON alike, base64 chunks included", async () => {
    const sse =
      'data: {"stream":"stdout","data":"out\\n"}\n\n: keepalive\n\ndata: {"stream":"stderr","data":"ZXJy","encoding":"base64"}\n\ndata: {"is_final":true,"exit_code":3,"duration_ms":5}\n\n';
    for (const body of [sse, sse.replace(/data: /g, "").replace(/\n\n/g, "\n")]) {
      const frames: unknown[] = [];
      const chunks = [...bytes(body)].map((b) => new Uint8Array([b]));
      const stream = new ReadableStream<Uint8Array>({
        start: (c) => (chunks.forEach((ch) => c.enqueue(ch)), c.close()),
      });
      const final = await readExecStream(stream, (f) => frames.push(f));
      expect(frames).toEqual([
        { kind: "output", stream: "stdout", text: "out\n" },
        { kind: "output", stream: "stderr", text: "err" },
      ]);
      expect(final).toEqual({ kind: "final", exitCode: 3, timedOut: false, error: null });
    }
  });

  it("treats an error frame as final and other spellings as output", () => {
    expect(toExecFrame({ is_final: true, error: "agent gone", code: "sandbox_agent_unreachable" })).toMatchObject({
      kind: "final",
      error: "agent gone",
    });
    expect(toExecFrame({ stdout: "x" })).toEqual({ kind: "output", stream: "stdout", text: "x" });
    expect(toExecFrame({ exit_code: 0 })).toMatchObject({ kind: "final", exitCode: 0 });
    expect(new FrameLineSplitter().push(bytes("id: 1\nevent: x\n: c\n\n"))).toEqual([]);
  });
});

describe("replay after a reconnect", () => {
  it("writes only what came after what the screen has", () => {
    expect(text(missedOutput(bytes("abcdef"), bytes("cdefgh")))).toBe("gh");
    expect(text(missedOutput(bytes("abcdef"), bytes("def")))).toBe("");
    expect(text(missedOutput(bytes("$ ls\r\nfile\r\n$ "), bytes("ls\r\nfile\r\n$ echo hi\r\nhi\r\n$ ")))).toBe(
      "echo hi\r\nhi\r\n$ ",
    );
    expect(missedOutput(bytes("abc"), bytes("xyz"))).toBeNull(); // more was missed than the engine kept
    expect(missedOutput(new Uint8Array(), bytes("xyz"))).toBeNull();
  });

  it("finds the overlap in 64 KiB replays", () => {
    const all = bytes(Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join(""));
    const seen = all.subarray(0, 150_000);
    const replay = all.subarray(all.length - 64 * 1024);
    expect(text(missedOutput(seen, replay))).toBe(text(all.subarray(150_000)));
  });

  it("keeps the tail of a stream", () => {
    const t = new TailBuffer(8);
    t.push(bytes("abc"));
    t.push(bytes("defgh"));
    t.push(bytes("ij"));
    expect(text(t.bytes())).toBe("cdefghij");
    t.push(bytes("0123456789"));
    expect(text(t.bytes())).toBe("23456789");
  });
});

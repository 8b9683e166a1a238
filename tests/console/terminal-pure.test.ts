import { describe, expect, it } from "vitest";
import { CwdMarkerFilter, wrapCommand } from "../../components/sandboxes/terminal/cwd-marker";
import { missedOutput, TailBuffer } from "../../components/sandboxes/terminal/replay";

// The terminal's pure pieces: the cwd marker of line mode and the replay overlap that lets a
// reconnected PTY write only what it missed. (Line mode's exec stream is read by the browser core:
// lib/api/core.test.ts.)

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

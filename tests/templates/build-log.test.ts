import { describe, expect, it } from "vitest";
import { newAnsiConverter, visibleLine } from "../../components/templates/build-log/ansi";
import { BuildLogModel } from "../../components/templates/build-log/log-model";

// The build log's reading of the engine's lines (engine/src/runtime/template-build.ts writes them)
// and its rendering: ANSI colours as classes, and nothing a build prints ever becoming markup.

let seq = 0;
const line = (step_index: number | null, stream: string, data: string) => ({ seq: ++seq, step_index, stream, data });

describe("ANSI rendering", () => {
  it("escapes HTML in build output: a build cannot inject elements or attributes", () => {
    const html = newAnsiConverter()(`<img src=x onerror="alert(1)"> & <script>alert('x')</script>`);
    expect(html).toBe(
      "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;",
    );
    expect(html).not.toMatch(/<[a-z]/i);
  });

  it("escapes inside coloured text too, and the only element is ansi_up's span", () => {
    const html = newAnsiConverter()('\u001b[31m<b onclick="x">red</b>\u001b[0m');
    expect(html).toBe(
      '<span class="text-red-700 dark:text-red-300">&lt;b onclick=&quot;x&quot;&gt;red&lt;/b&gt;</span>',
    );
  });

  it("turns the basic colours into light and dark classes, and bold into a style", () => {
    const html = newAnsiConverter()("\u001b[1;32mok\u001b[0m plain \u001b[44mbg\u001b[0m");
    expect(html).toContain('class="text-green-700 dark:text-green-300"');
    expect(html).toContain("font-weight:bold");
    expect(html).toContain('class="bg-blue-100 dark:bg-blue-950"');
    expect(html).toContain(" plain ");
  });

  it("keeps a colour across calls of one converter (a colour set on one line carries on)", () => {
    const convert = newAnsiConverter();
    convert("\u001b[31mstart");
    expect(convert("still red")).toContain("text-red-700");
  });

  it("drops OSC 8 hyperlinks: the text stays, no link", () => {
    const html = newAnsiConverter()("\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007");
    expect(html).not.toContain("<a");
    expect(html).not.toContain("evil.example");
  });

  it("shows what a terminal shows of a line redrawn with carriage returns", () => {
    expect(visibleLine("10%\r50%\r100%\n")).toBe("100%");
    expect(visibleLine("done\r\n")).toBe("done");
    expect(visibleLine("progress\r")).toBe("progress");
    expect(visibleLine("plain")).toBe("plain");
  });
});

describe("BuildLogModel", () => {
  it("groups lines into steps with their command and exit, and tells stdout from stderr", () => {
    const m = new BuildLogModel();
    m.push(line(null, "system", "queued: 2 step(s) on python-3.12\n"));
    m.push(line(null, "system", "build sandbox ready in 80 ms\n"));
    m.push(line(0, "system", "step 1/2: echo hi && echo oops >&2\n"));
    m.push(line(0, "stdout", "hi\n"));
    m.push(line(0, "stderr", "oops\n"));
    m.push(line(0, "system", "step 1 exited with code 0 in 12 ms\n"));
    m.push(line(1, "system", "step 2/2: exit 3\n"));
    m.push(line(1, "system", "step 2 exited with code 3 in 5 ms\n"));
    m.push(line(1, "system", "build failed: step 2 exited with code 3\n"));
    expect(m.sections.map((s) => s.kind)).toEqual(["engine", "step", "step"]);
    const [engine, first, second] = m.sections;
    expect(engine!.entries).toHaveLength(2);
    expect(first).toMatchObject({ index: 0, command: "echo hi && echo oops >&2", exit: { code: 0, durationMs: 12 } });
    expect(first!.entries.map((e) => [e.stream, e.html])).toEqual([
      ["stdout", "hi"],
      ["stderr", "oops"],
    ]);
    expect(second).toMatchObject({ index: 1, command: "exit 3", exit: { code: 3, durationMs: 5, reason: null } });
    expect(second!.entries.map((e) => e.html)).toEqual(["build failed: step 2 exited with code 3"]);
    expect(m.stepState(0)).toBe("ok");
    // Still running until the final frame: the exit line alone already says it failed.
    expect(m.stepState(1)).toBe("failed");
    expect(m.stepState(2)).toBe("not-run");
  });

  it("takes the failing step, exit code and output tail from the final frame", () => {
    const m = new BuildLogModel();
    m.push(line(1, "system", "step 2/3: false\n"));
    m.finish({
      status: "failed",
      error: { step_index: 1, step: "false", exit_code: 1, output: "\u001b[31mE: <nope>\u001b[0m\n" },
      size_mb: null,
    });
    expect(m.failure()).toEqual({
      stepIndex: 1,
      step: "false",
      exitCode: 1,
      tailHtml: '<span class="text-red-700 dark:text-red-300">E: &lt;nope&gt;</span>',
    });
    expect(m.stepState(1)).toBe("failed");
  });

  it("marks a step stopped by the engine (timeout) as failed with the reason", () => {
    const m = new BuildLogModel();
    m.push(line(0, "system", "step 1/1: sleep 99\n"));
    m.push(line(0, "system", "step 1 exited with code 124 in 1000 ms (step timed out after 1 s)\n"));
    expect(m.sections[0]).toMatchObject({ exit: { code: 124, reason: "step timed out after 1 s" } });
    expect(m.stepState(0)).toBe("failed");
  });

  it("ignores lines replayed after a reconnect and resumes after the last one", () => {
    const m = new BuildLogModel();
    const a = line(0, "stdout", "one\n");
    const b = line(0, "stdout", "two\n");
    m.push(a);
    m.push(b);
    m.push(a);
    expect(m.lastSeq).toBe(b.seq);
    expect(m.lines).toBe(2);
  });

  it("a step still running is running until the final frame, then stopped", () => {
    const m = new BuildLogModel();
    m.push(line(0, "system", "step 1/1: sleep 5\n"));
    expect(m.stepState(0)).toBe("running");
    m.finish({ status: "failed", error: { step_index: null, exit_code: null, output: "deleted" }, size_mb: null });
    expect(m.stepState(0)).toBe("stopped");
    expect(m.failure()?.stepIndex).toBeNull();
  });

  it("a header with a stray step number is kept as output, not taken as the header", () => {
    const m = new BuildLogModel();
    m.push(line(0, "stdout", "step 1/1: printed by the build\n"));
    m.push(line(0, "system", "step 7/9: not this step\n"));
    expect(m.sections[0]).toMatchObject({ command: null });
    expect((m.sections[0] as { entries: unknown[] }).entries).toHaveLength(2);
  });
});

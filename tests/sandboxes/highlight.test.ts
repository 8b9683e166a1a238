import { describe, expect, it } from "vitest";
import { languageFor, tokenize } from "../../components/sandboxes/files/highlight";

const kinds = (text: string, lang: string | null) =>
  tokenize(text, lang)
    .filter((t) => t.kind !== "plain")
    .map((t) => `${t.kind}:${t.text}`);

describe("file viewer tokenizer", () => {
  it("picks languages by extension and by name", () => {
    expect(languageFor("/workspace/app.tsx")).toBe("js");
    expect(languageFor("main.py")).toBe("python");
    expect(languageFor("Dockerfile")).toBe("dockerfile");
    expect(languageFor("notes")).toBeNull();
  });

  it("gives back the text exactly", () => {
    const src = 'const a = "x // not a comment"; // real\n/* block\n */ let n = 0x1f;\n`tpl ${a}`';
    expect(
      tokenize(src, "js")
        .map((t) => t.text)
        .join(""),
    ).toBe(src);
  });

  it("tells comments, strings, numbers and keywords apart (JS)", () => {
    expect(kinds('const a = "x // y"; // c\nreturn 42', "js")).toEqual([
      "keyword:const",
      'string:"x // y"',
      "comment:// c",
      "keyword:return",
      "number:42",
    ]);
  });

  it("handles Python triple-quoted strings, comments and decorators", () => {
    expect(kinds('@app.get\ndef f():\n    """doc # not comment"""\n    return 1  # yes', "python")).toEqual([
      "tag:@app.get",
      "keyword:def",
      'string:"""doc # not comment"""',
      "keyword:return",
      "number:1",
      "comment:# yes",
    ]);
  });

  it("knows markup tags and SQL keywords in any case", () => {
    expect(kinds('<a href="x">t</a><!-- c -->', "markup")).toEqual([
      "tag:<a",
      'string:"x"',
      "tag:>",
      "tag:</a>",
      "comment:<!-- c -->",
    ]);
    expect(kinds("SELECT id FROM t -- all", "sql")).toEqual(["keyword:SELECT", "keyword:FROM", "comment:-- all"]);
  });

  it("leaves unknown languages as one plain token and is linear on big inputs", () => {
    expect(tokenize("a b c", null)).toEqual([{ kind: "plain", text: "a b c" }]);
    const big = 'let x = "s"; // c\n'.repeat(20_000);
    const t0 = performance.now();
    expect(
      tokenize(big, "js")
        .map((t) => t.text)
        .join("").length,
    ).toBe(big.length);
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

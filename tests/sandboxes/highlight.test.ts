import { describe, expect, it } from "vitest";
import { HIGHLIGHT_MAX_CHARS, highlight, languageFor } from "../../components/sandboxes/files/highlight";

/** The text of each token span of a class, in order. */
const tokens = (html: string, kind: string) =>
  [...html.matchAll(new RegExp(`<span class="hljs-${kind}[^"]*">([^<]*)</span>`, "g"))].map((m) => m[1]);

/** What a browser would show for the HTML: tags dropped, entities read. */
const shown = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");

describe("file viewer highlighting (highlight.js)", () => {
  it("picks a grammar by name, then by extension; unknown files are plain", () => {
    expect(languageFor("/workspace/app.tsx")).toBe("typescript");
    expect(languageFor("/workspace/app.mjs")).toBe("javascript");
    expect(languageFor("main.py")).toBe("python");
    expect(languageFor("/srv/Dockerfile")).toBe("dockerfile");
    expect(languageFor("Dockerfile.dev")).toBe("dockerfile");
    expect(languageFor("Makefile")).toBe("makefile");
    expect(languageFor(".bashrc")).toBe("bash");
    expect(languageFor("pyproject.toml")).toBe("ini");
    expect(languageFor("index.HTML")).toBe("xml");
    expect(languageFor("notes")).toBeNull();
    expect(languageFor("data.bin")).toBeNull();
    // Names of Object's own members are files like any other, not grammars.
    for (const name of ["constructor", "x.constructor", "a.__proto__", "toString", "y.hasOwnProperty"])
      expect(languageFor(name), name).toBeNull();
  });

  it("colours TypeScript: keywords, types, strings, numbers, comments", async () => {
    const html = await highlight(
      'interface A { n: number }\nconst a: A = { n: 42 }; // c\nexport const s = "x";\n',
      "typescript",
    );
    expect(tokens(html, "keyword")).toEqual(["interface", "const", "export", "const"]);
    expect(tokens(html, "built_in")).toContain("number");
    expect(tokens(html, "number")).toEqual(["42"]);
    expect(tokens(html, "comment")).toEqual(["// c"]);
    expect(tokens(html, "string")).toEqual(["&quot;x&quot;"]);
  });

  it("colours Python: def, the function's name, strings, numbers, comments", async () => {
    const src = 'import os\n\ndef main():\n    # say hello\n    print("hello", 42)\n';
    const html = await highlight(src, "python");
    expect(tokens(html, "keyword")).toEqual(["import", "def"]);
    expect(tokens(html, "title function_")).toEqual(["main"]);
    expect(tokens(html, "comment")).toEqual(["# say hello"]);
    expect(tokens(html, "string")).toEqual(["&quot;hello&quot;"]);
    expect(tokens(html, "number")).toEqual(["42"]);
    expect(shown(html)).toBe(src);
  });

  it("escapes markup in a file: its HTML is text, never elements", async () => {
    const src = `<script>alert("x")</script><img src=x onerror="alert(1)">\n&amp; <b>bold</b>`;
    for (const language of ["xml", "markdown", "typescript", "python"] as const) {
      const html = await highlight(src, language);
      expect(html, language).not.toMatch(/<(script|img|b)\b/i);
      // Only highlight.js's own span tags are markup; everything else is the escaped text.
      expect(html.replace(/<\/?span[^>]*>/g, ""), language).not.toMatch(/[<>]/);
      expect(shown(html), language).toBe(src);
    }
    expect(tokens(await highlight("<a href='x'>t</a>", "xml"), "name")).toEqual(["a", "a"]);
  });

  it("keeps a size cap for the viewer to fall back to plain text", () => {
    expect(HIGHLIGHT_MAX_CHARS).toBe(200_000);
  });

  it("colours a file near the cap quickly", async () => {
    const big = 'let x = "s"; // c\n'.repeat(Math.floor(HIGHLIGHT_MAX_CHARS / 18));
    await highlight("warm up", "javascript");
    const t0 = performance.now();
    expect(shown(await highlight(big, "javascript"))).toBe(big);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

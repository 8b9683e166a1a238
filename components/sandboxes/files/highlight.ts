/**
 * A light syntax tokenizer for the file viewer: comments, strings, numbers, keywords and markup
 * tags, by file extension. Why not a highlighter package: the good ones cost 20–300 kB gzipped
 * (highlight.js with its common languages ~40 kB, Prism plus languages ~20 kB, Shiki's grammars and
 * WASM far more), none is installed, and a file browser needs "readable at a glance", not a
 * grammar-exact parse. One alternation regex per language, run once over the text, is a few kB and
 * linear in the file's size. Anything it does not know is shown as plain text.
 */

export type TokenKind = "comment" | "string" | "number" | "keyword" | "tag" | "plain";
export interface Token {
  kind: TokenKind;
  text: string;
}

interface Language {
  /** Rules tried in order at each position; the first that matches wins. */
  rules: [Exclude<TokenKind, "plain">, string][];
  keywords?: Set<string>;
  /** SQL and similar: keywords in any case. */
  caseInsensitive?: boolean;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

// Regex sources (no flags): shared pieces.
const DQ = String.raw`"(?:[^"\\\n]|\\.)*"?`;
const SQ = String.raw`'(?:[^'\\\n]|\\.)*'?`;
const BT = String.raw`\`(?:[^\`\\]|\\[\s\S])*\`?`;
const NUM = String.raw`\b(?:0[xX][\da-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)n?\b`;
const C_LINE = String.raw`\/\/[^\n]*`;
const C_BLOCK = String.raw`\/\*[\s\S]*?(?:\*\/|$)`;
const HASH = String.raw`#[^\n]*`;
const WORD = String.raw`\b[A-Za-z_$][\w$]*\b`;

const JS_KEYWORDS = words(`
  abstract as async await break case catch class const continue debugger declare default delete do else enum export extends
  false finally for from function get if implements import in instanceof interface keyof let new null of private protected
  public readonly return satisfies set static super switch this throw true try type typeof undefined var void while with yield`);

const cLike = (keywords: string): Language => ({
  rules: [
    ["comment", C_LINE],
    ["comment", C_BLOCK],
    ["string", DQ],
    ["string", SQ],
    ["string", BT],
    ["number", NUM],
    ["keyword", WORD],
  ],
  keywords: words(keywords),
});

const hashLang = (keywords: string, extra: [Exclude<TokenKind, "plain">, string][] = []): Language => ({
  rules: [...extra, ["comment", HASH], ["string", DQ], ["string", SQ], ["number", NUM], ["keyword", WORD]],
  keywords: words(keywords),
});

const LANGUAGES: Record<string, Language> = {
  js: { ...cLike(""), keywords: JS_KEYWORDS },
  python: hashLang(
    `False None True and as assert async await break class continue def del elif else except finally for from global if import
     in is lambda match case nonlocal not or pass raise return try while with yield self print`,
    [
      ["string", String.raw`[rRbBuUfF]{0,2}"""[\s\S]*?(?:"""|$)`],
      ["string", String.raw`[rRbBuUfF]{0,2}'''[\s\S]*?(?:'''|$)`],
      ["tag", String.raw`@[\w.]+`],
    ],
  ),
  shell: hashLang(
    `if then else elif fi for while until do done case esac in function return export local readonly set unset echo cd exit source alias`,
  ),
  yaml: hashLang(`true false null yes no on off`, [["tag", String.raw`^[ \t-]*[\w.-]+(?=\s*:)`]]),
  toml: hashLang(`true false`, [["tag", String.raw`^\s*\[[^\]\n]*\]`]]),
  dockerfile: hashLang(
    `FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL AS`,
  ),
  ruby: hashLang(
    `BEGIN END alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require`,
  ),
  json: {
    rules: [
      ["string", DQ],
      ["number", String.raw`-?${NUM}`],
      ["keyword", String.raw`\b(?:true|false|null)\b`],
    ],
  },
  go: cLike(
    `break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota`,
  ),
  rust: cLike(
    `as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while`,
  ),
  c: cLike(
    `auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this namespace template typename using virtual bool true false nullptr include define`,
  ),
  java: cLike(
    `abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long native new null package private protected public return short static super switch synchronized this throw throws try void volatile while true false var val fun when object`,
  ),
  css: {
    rules: [
      ["comment", C_BLOCK],
      ["string", DQ],
      ["string", SQ],
      ["tag", String.raw`@[\w-]+`],
      ["number", String.raw`#[\da-fA-F]{3,8}\b|-?\b\d+(?:\.\d+)?(?:%|[a-z]+)?`],
    ],
  },
  markup: {
    rules: [
      ["comment", String.raw`<!--[\s\S]*?(?:-->|$)`],
      ["tag", String.raw`<\/?[A-Za-z][\w:.-]*|\/?>`],
      ["string", DQ],
      ["string", SQ],
    ],
  },
  sql: {
    rules: [
      ["comment", String.raw`--[^\n]*`],
      ["comment", C_BLOCK],
      ["string", SQ],
      ["number", NUM],
      ["keyword", WORD],
    ],
    keywords: words(
      `select from where and or not insert into values update set delete create table drop alter index view join left right inner outer on as group by order having limit offset distinct union all null is in like between case when then else end primary key foreign references default begin commit rollback returning with`,
    ),
    caseInsensitive: true,
  },
  markdown: {
    rules: [
      ["keyword", String.raw`^#{1,6} [^\n]*`],
      ["string", String.raw`\`[^\`\n]+\``],
      ["comment", String.raw`<!--[\s\S]*?(?:-->|$)`],
    ],
  },
};

const BY_EXTENSION: Record<string, string> = {
  js: "js",
  jsx: "js",
  mjs: "js",
  cjs: "js",
  ts: "js",
  tsx: "js",
  mts: "js",
  cts: "js",
  py: "python",
  pyi: "python",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  env: "shell",
  bashrc: "shell",
  profile: "shell",
  yml: "yaml",
  yaml: "yaml",
  toml: "toml",
  ini: "toml",
  cfg: "toml",
  conf: "toml",
  rb: "ruby",
  json: "json",
  jsonc: "js",
  json5: "js",
  ipynb: "json",
  lock: "json",
  go: "go",
  rs: "rust",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  hpp: "c",
  cxx: "c",
  java: "java",
  kt: "java",
  kts: "java",
  scala: "java",
  cs: "java",
  swift: "java",
  dart: "java",
  css: "css",
  scss: "css",
  less: "css",
  html: "markup",
  htm: "markup",
  xml: "markup",
  svg: "markup",
  vue: "markup",
  svelte: "markup",
  sql: "sql",
  md: "markdown",
  markdown: "markdown",
};

const BY_NAME: Record<string, string> = {
  dockerfile: "dockerfile",
  makefile: "shell",
  ".bashrc": "shell",
  ".profile": "shell",
  ".env": "shell",
  ".gitignore": "shell",
};

/** The tokenizer's language for a file name, or null (shown as plain text). */
export function languageFor(fileName: string): string | null {
  const base = fileName.split("/").pop()?.toLowerCase() ?? "";
  if (BY_NAME[base]) return BY_NAME[base]!;
  if (base.startsWith("dockerfile")) return "dockerfile";
  const dot = base.lastIndexOf(".");
  return dot >= 0 ? (BY_EXTENSION[base.slice(dot + 1)] ?? null) : null;
}

const compiled = new Map<string, RegExp>();

function regexFor(name: string, lang: Language): RegExp {
  let re = compiled.get(name);
  if (!re) {
    re = new RegExp(lang.rules.map(([, src]) => `(${src})`).join("|"), "gm");
    compiled.set(name, re);
  }
  return re;
}

/**
 * Splits `text` into tokens whose texts concatenate back to `text` exactly. A word matched by a
 * keyword rule is a keyword only if the language lists it; otherwise it is plain.
 */
export function tokenize(text: string, language: string | null): Token[] {
  const lang = language ? LANGUAGES[language] : undefined;
  if (!lang) return [{ kind: "plain", text }];
  const re = regexFor(language!, lang);
  re.lastIndex = 0;
  const out: Token[] = [];
  const push = (kind: TokenKind, s: string) => {
    if (!s) return;
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += s;
    else out.push({ kind, text: s });
  };
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === "") {
      re.lastIndex++; // an empty match (e.g. `^` rules) must not stall the scan
      continue;
    }
    push("plain", text.slice(at, m.index));
    const rule = m.slice(1).findIndex((g) => g !== undefined);
    let kind: TokenKind = lang.rules[rule]![0];
    if (kind === "keyword" && lang.keywords) {
      const word = lang.caseInsensitive ? m[0].toLowerCase() : m[0];
      if (!lang.keywords.has(word)) kind = "plain";
    }
    push(kind, m[0]);
    at = m.index + m[0].length;
  }
  push("plain", text.slice(at));
  return out;
}

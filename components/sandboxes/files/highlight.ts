// Syntax colouring for the file viewer: highlight.js core with one grammar per language, both loaded
// with import() when a file is opened, so the Files page's first load carries only the tables below.
// Core and a grammar are ~10 KiB gzipped together (TypeScript's ~4 KiB, Python's ~3 KiB); a page
// never loads a grammar it does not show. highlight.js escapes the text it returns (&, <, >, quotes):
// its output is the only HTML the viewer renders, never the file's own text.

import type { LanguageFn } from "highlight.js";

type Grammar = () => Promise<{ default: LanguageFn }>;

/** The grammars the viewer knows, by highlight.js name; each import() is a chunk of its own. */
const GRAMMARS = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  csharp: () => import("highlight.js/lib/languages/csharp"),
  css: () => import("highlight.js/lib/languages/css"),
  dart: () => import("highlight.js/lib/languages/dart"),
  diff: () => import("highlight.js/lib/languages/diff"),
  dockerfile: () => import("highlight.js/lib/languages/dockerfile"),
  go: () => import("highlight.js/lib/languages/go"),
  graphql: () => import("highlight.js/lib/languages/graphql"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  kotlin: () => import("highlight.js/lib/languages/kotlin"),
  less: () => import("highlight.js/lib/languages/less"),
  lua: () => import("highlight.js/lib/languages/lua"),
  makefile: () => import("highlight.js/lib/languages/makefile"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  php: () => import("highlight.js/lib/languages/php"),
  protobuf: () => import("highlight.js/lib/languages/protobuf"),
  python: () => import("highlight.js/lib/languages/python"),
  ruby: () => import("highlight.js/lib/languages/ruby"),
  rust: () => import("highlight.js/lib/languages/rust"),
  scala: () => import("highlight.js/lib/languages/scala"),
  scss: () => import("highlight.js/lib/languages/scss"),
  sql: () => import("highlight.js/lib/languages/sql"),
  swift: () => import("highlight.js/lib/languages/swift"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
} satisfies Record<string, Grammar>;

export type Language = keyof typeof GRAMMARS;

const BY_EXTENSION: Record<string, Language> = {
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  py: "python",
  pyi: "python",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  env: "bash",
  yml: "yaml",
  yaml: "yaml",
  toml: "ini",
  ini: "ini",
  cfg: "ini",
  conf: "ini",
  rb: "ruby",
  json: "json",
  jsonc: "json",
  json5: "json",
  ipynb: "json",
  go: "go",
  rs: "rust",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  hh: "cpp",
  hpp: "cpp",
  java: "java",
  kt: "kotlin",
  kts: "kotlin",
  scala: "scala",
  cs: "csharp",
  swift: "swift",
  dart: "dart",
  css: "css",
  scss: "scss",
  less: "less",
  html: "xml",
  htm: "xml",
  xml: "xml",
  svg: "xml",
  vue: "xml",
  svelte: "xml",
  sql: "sql",
  md: "markdown",
  markdown: "markdown",
  diff: "diff",
  patch: "diff",
  lua: "lua",
  php: "php",
  proto: "protobuf",
  graphql: "graphql",
  gql: "graphql",
  mk: "makefile",
};

const BY_NAME: Record<string, Language> = {
  dockerfile: "dockerfile",
  containerfile: "dockerfile",
  makefile: "makefile",
  gnumakefile: "makefile",
  ".bashrc": "bash",
  ".bash_profile": "bash",
  ".profile": "bash",
  ".zshrc": "bash",
  ".env": "bash",
  ".gitignore": "bash",
};

/** The grammar for a file name (by its name, then its extension), or null: shown as plain text. */
export function languageFor(fileName: string): Language | null {
  const base = fileName.split("/").pop()?.toLowerCase() ?? "";
  // Own keys only: a file named "constructor" or "x.__proto__" must not find Object's members.
  if (Object.hasOwn(BY_NAME, base)) return BY_NAME[base]!;
  if (base.startsWith("dockerfile.") || base.endsWith(".dockerfile")) return "dockerfile";
  const dot = base.lastIndexOf(".");
  const extension = base.slice(dot + 1);
  return dot >= 0 && Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension]! : null;
}

/** Past this many characters the text is shown plain: tens of thousands of spans would slow the page. */
export const HIGHLIGHT_MAX_CHARS = 200_000;

/**
 * `text` as highlight.js HTML: every character of it escaped, tokens wrapped in
 * `<span class="hljs-…">`. Loads highlight.js core and the grammar on first use.
 */
export async function highlight(text: string, language: Language): Promise<string> {
  const [{ default: hljs }, { default: grammar }] = await Promise.all([
    import("highlight.js/lib/core"),
    GRAMMARS[language](),
  ]);
  if (!hljs.getLanguage(language)) hljs.registerLanguage(language, grammar);
  // ignoreIllegals: a file that is not quite the language (a template, a fragment) is still coloured.
  return hljs.highlight(text, { language, ignoreIllegals: true }).value;
}

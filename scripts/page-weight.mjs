#!/usr/bin/env node
// First-load JavaScript per route of a production build (`next build`), measured as
// ../shared/perf-notes.md describes for Next 16, which no longer prints it:
//
//   rootMainFiles of .next/build-manifest.json
//   ∪ the entry chunks (entryJSFiles) of every layout, template, page, loading, error, global-error and
//     not-found segment on the route's path, from .next/server/app/**/page_client-reference-manifest.js
//   (polyfills, which load only in nomodule browsers, and dynamic imports are left out),
//   each file gzipped at level 6 (`gzip -6 -c | wc -c`), summed.
//
//   node scripts/page-weight.mjs                 /login, /sandboxes and the ceilings
//   node scripts/page-weight.mjs --all           every route
//   node scripts/page-weight.mjs --url URL       also cross-check against the <script src> tags that a
//                                                running server (`next start`) sends for those routes
//   node scripts/page-weight.mjs --json          machine-readable
// Exit code 1 when a ceiling (a perf-notes budget or an issue 12 weight) is exceeded or a cross-check differs.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import zlib from "node:zlib";

const KiB = 1024;
/**
 * Ceilings, first-load JS, gzip: the budgets from perf-notes.md, and issue 12's "no heavier than
 * before it" (the weights measured just before its browser data layer and shared UI vocabulary).
 * The list's rose by 0.1 KiB in issue 13, for what every page now carries: reads retried with
 * Retry-After (lib/queries/retry.ts) and the watch that shows the outage banner; every notice
 * itself loads only when shown. Issue 14 added 0.1 KiB more: two nav entries (Events, Limits), the
 * bridge that lets received webhook events update the list (its code loads after hydration), and
 * the one error panel the resource pages share with the list; their page descriptions and links were
 * moved out of what the list loads to make room.
 */
const BUDGETS = [
  { route: "/sandboxes", kib: 180, note: "sandbox list (perf-notes budget)" },
  {
    route: "/sandboxes",
    kib: 180,
    note: "sandbox list, issue 12's weight + 13, 14 and 21 (the role's permissions and read-only notes)",
  },
  { route: "/sandboxes/[id]", kib: 300, note: "sandbox page with terminal and charts (perf-notes budget)" },
  {
    route: "/sandboxes/[id]",
    kib: 182.6,
    note: "sandbox page: issue 12's weight + issue 21's read-only notes and terminal gate",
  },
  { route: "/team", kib: 200, note: "members and invitations (issue 21: each new page at most 200 KiB)" },
  { route: "/settings", kib: 200, note: "your account (issue 21)" },
  { route: "/settings/team", kib: 200, note: "team settings (issue 21)" },
  { route: "/settings/sso", kib: 200, note: "single sign-on (issue 21)" },
  { route: "/audit", kib: 200, note: "audit log (issue 21)" },
  { route: "/invite/[token]", kib: 200, note: "invitation page (issue 21)" },
  { route: "/settings/tokens", kib: 200, note: "personal API tokens and agent set-up (issue 23)" },
  { route: "/limits", kib: 200, note: "limits page (issue 14: each new page at most 200 KiB)" },
  { route: "/usage", kib: 200, note: "usage and cost (issue 22; recharts loads with its chart, after)" },
  { route: "/volumes", kib: 200, note: "volumes page (issue 14 budget)" },
  { route: "/templates", kib: 200, note: "templates (issue 14)" },
  { route: "/templates/new", kib: 200, note: "template create, CodeMirror loads on demand (issue 14)" },
  { route: "/templates/[id]", kib: 200, note: "a template's page with its live build log (issue 14)" },
  { route: "/events", kib: 200, note: "received events feed (issue 14 budget)" },
  { route: "/webhooks", kib: 200, note: "webhooks list (issue 14: each new page at most 200 KiB)" },
  { route: "/webhooks/[id]", kib: 200, note: "webhook page with its delivery log (issue 14)" },
  { route: "/snapshots", kib: 200, note: "snapshot list (issue 14)" },
  { route: "/snapshots/[id]", kib: 200, note: "snapshot page with fork tree and fork form (issue 14)" },
];
const DEFAULT_ROUTES = ["/login", "/sandboxes"];
/** Segment files whose client entry chunks load with the route. */
const SEGMENT_KINDS = new Set([
  "layout",
  "template",
  "page",
  "loading",
  "error",
  "global-error",
  "not-found",
  "forbidden",
  "unauthorized",
]);

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const distDir = path.resolve(option("--dir") ?? ".next");
const baseUrl = option("--url");

function fail(message) {
  console.error(`page-weight: ${message}`);
  process.exit(2);
}

if (!fs.existsSync(path.join(distDir, "build-manifest.json")))
  fail(`no production build in ${distDir} (run \`npx next build\` first)`);
const buildManifest = JSON.parse(fs.readFileSync(path.join(distDir, "build-manifest.json"), "utf8"));
const rootMainFiles = buildManifest.rootMainFiles ?? [];
if (rootMainFiles.length === 0) fail("build-manifest.json has no rootMainFiles (is this an App Router build?)");

function* walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(p);
    else yield p;
  }
}

/** "/(console)/sandboxes/page" → "/sandboxes"; "/page" → "/". */
function routeOf(entryName) {
  const segments = entryName.split("/").filter(Boolean).slice(0, -1);
  const visible = segments.filter((s) => !(s.startsWith("(") && s.endsWith(")")) && !s.startsWith("@"));
  return "/" + visible.join("/");
}

// Each manifest is a script assigning globalThis.__RSC_MANIFEST[entry] = {…}; evaluate it in isolation.
const routes = new Map();
const appServerDir = path.join(distDir, "server", "app");
for (const file of walk(appServerDir)) {
  if (!file.endsWith("page_client-reference-manifest.js")) continue;
  const sandbox = { globalThis: {} };
  sandbox.globalThis = sandbox;
  vm.runInNewContext(fs.readFileSync(file, "utf8"), sandbox, { filename: file });
  for (const [entryName, manifest] of Object.entries(sandbox.__RSC_MANIFEST ?? {})) {
    const route = routeOf(entryName);
    if (route.startsWith("/_")) continue; // /_not-found, /_global-error: internal entries
    // Segment directories on the route's path, route groups included: "", "(console)", "(console)/sandboxes".
    const dirs = entryName.split("/").filter(Boolean).slice(0, -1);
    const onPath = new Set(dirs.map((_, i) => dirs.slice(0, i + 1).join("/")));
    onPath.add("");
    const files = new Set(rootMainFiles);
    const segments = [];
    const skipped = [];
    for (const [key, chunks] of Object.entries(manifest.entryJSFiles ?? {})) {
      const rel = key.replace(/^\[project\]\//, "").replace(/^(src\/)?app\/?/, "");
      const parts = rel.split("/");
      const kind = parts.pop();
      const dir = parts.join("/");
      if (!key.includes("app/") || !SEGMENT_KINDS.has(kind) || !onPath.has(dir)) {
        skipped.push(key);
        continue;
      }
      segments.push(`${dir ? dir + "/" : ""}${kind}`);
      for (const chunk of chunks) files.add(chunk);
    }
    routes.set(route, { route, entryName, files: [...files], segments, skipped });
  }
}
if (routes.size === 0) fail(`no page_client-reference-manifest.js under ${appServerDir}`);

const gzipCli = spawnSync("gzip", ["--version"], { stdio: "ignore" }).status === 0;
const sizeCache = new Map();
function sizes(file) {
  if (sizeCache.has(file)) return sizeCache.get(file);
  const abs = path.join(distDir, file);
  const raw = fs.readFileSync(abs);
  // gzip(1) at level 6 as the notes prescribe; zlib's level 6 as a fallback (within a few bytes).
  const gz = gzipCli
    ? spawnSync("gzip", ["-6", "-c", abs], { maxBuffer: 64 * 1024 * 1024 }).stdout.length
    : zlib.gzipSync(raw, { level: 6 }).length;
  const s = { raw: raw.length, gzip: gz };
  sizeCache.set(file, s);
  return s;
}

function weigh(files) {
  let raw = 0;
  let gzip = 0;
  for (const f of files) {
    const s = sizes(f);
    raw += s.raw;
    gzip += s.gzip;
  }
  return { raw, gzip };
}

const selected = flag("--all") ? [...routes.keys()].sort() : DEFAULT_ROUTES;
const shared = weigh(rootMainFiles);
const rows = [];
for (const route of selected) {
  const r = routes.get(route);
  if (!r) {
    rows.push({ route, missing: true });
    continue;
  }
  rows.push({ route, ...weigh(r.files), files: r.files, segments: r.segments, skipped: r.skipped });
}

// Cross-check: the <script src> tags a running server sends (nomodule polyfills excluded).
let crossCheckFailed = false;
const crossChecks = [];
if (baseUrl) {
  for (const row of rows) {
    if (row.missing) continue;
    const res = await fetch(new URL(row.route, baseUrl), { redirect: "manual" });
    const html = await res.text();
    const served = new Set();
    for (const tag of html.match(/<script\b[^>]*>/gi) ?? []) {
      const src = /\ssrc="([^"]+)"/i.exec(tag)?.[1];
      if (!src || /\snomodule\b/i.test(tag)) continue;
      const p = new URL(src, baseUrl).pathname;
      if (p.startsWith("/_next/")) served.add(p.slice("/_next/".length));
    }
    const computed = new Set(row.files);
    const missingFromHtml = [...computed].filter((f) => !served.has(f));
    const extraInHtml = [...served].filter((f) => !computed.has(f));
    const ok = res.status < 300 && missingFromHtml.length === 0 && extraInHtml.length === 0;
    if (!ok) crossCheckFailed = true;
    crossChecks.push({
      route: row.route,
      status: res.status,
      ok,
      served: served.size,
      computed: computed.size,
      missingFromHtml,
      extraInHtml,
    });
  }
}

const budgetRows = BUDGETS.map((b) => {
  const row =
    rows.find((r) => r.route === b.route && !r.missing) ??
    (routes.has(b.route) ? { route: b.route, ...weigh(routes.get(b.route).files) } : null);
  return { ...b, gzip: row ? row.gzip : null, ok: row ? row.gzip <= b.kib * KiB : null };
});
const overBudget = budgetRows.some((b) => b.ok === false);

if (flag("--json")) {
  console.log(
    JSON.stringify(
      { distDir, gzip: gzipCli ? "gzip -6" : "zlib level 6", shared, routes: rows, budgets: budgetRows, crossChecks },
      null,
      2,
    ),
  );
} else {
  const kib = (n) => `${(n / KiB).toFixed(1)} KiB`;
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  console.log(
    `First-load JS per route (${path.relative(process.cwd(), distDir) || "."}, ${gzipCli ? "gzip -6" : "zlib level 6"})\n`,
  );
  console.log(`${pad("route", 26)}${lpad("files", 6)}${lpad("raw", 13)}${lpad("gzip", 13)}`);
  console.log(
    `${pad("shared (rootMainFiles)", 26)}${lpad(rootMainFiles.length, 6)}${lpad(kib(shared.raw), 13)}${lpad(kib(shared.gzip), 13)}`,
  );
  for (const row of rows) {
    if (row.missing) console.log(`${pad(row.route, 26)}${lpad("—", 6)}${lpad("no such route", 26)}`);
    else
      console.log(
        `${pad(row.route, 26)}${lpad(row.files.length, 6)}${lpad(kib(row.raw), 13)}${lpad(kib(row.gzip), 13)}`,
      );
  }
  console.log("\nCeilings (perf-notes.md budgets; issue 12: no heavier than before it)\n");
  for (const b of budgetRows) {
    const ratio = b.gzip === null ? "" : ` (${((b.gzip / (b.kib * KiB)) * 100).toFixed(1)}%)`;
    const verdict = b.ok === null ? "route not built yet" : b.ok ? `ok${ratio}` : `OVER${ratio}`;
    console.log(
      `${pad(b.route, 26)}${lpad(b.gzip === null ? "—" : kib(b.gzip), 12)} ≤ ${lpad(`${b.kib} KiB`, 10)}  ${pad(verdict, 14)}${b.note}`,
    );
  }
  if (flag("--verbose")) {
    for (const row of rows.filter((r) => !r.missing)) {
      console.log(`\n${row.route}: segments ${row.segments.join(", ") || "(none)"}`);
      for (const f of row.files) console.log(`  ${pad(f, 48)}${lpad(kib(sizes(f).gzip), 12)}`);
      if (row.skipped.length) console.log(`  not counted (not a segment on this path): ${row.skipped.join(", ")}`);
    }
  }
  if (crossChecks.length) {
    console.log(`\nCross-check against <script src> tags served by ${baseUrl}\n`);
    for (const c of crossChecks) {
      const verdict = c.ok
        ? "same set"
        : `DIFFERS (HTTP ${c.status}; only computed: ${c.missingFromHtml.join(" ") || "—"}; only served: ${c.extraInHtml.join(" ") || "—"})`;
      console.log(`${pad(c.route, 26)}${lpad(`${c.served} served / ${c.computed} computed`, 26)}  ${verdict}`);
    }
  }
}
process.exit(overBudget || crossCheckFailed ? 1 : 0);

// `npm run bench -- --only sso`: an SSO sign-in end to end against a local OpenID provider
// (oidc-provider on loopback, tests/helpers/oidc-idp.ts) and the production console server (needs
// `npx next build`): Baton's start (discovery, state/nonce/PKCE, redirect), the IdP's login form,
// and Baton's callback (discovery, code exchange, ID token checks, JIT membership, session). Prints
// p50/p95 of the whole sign-in and of Baton's two steps alone, each beside its reference with the
// ratio: a password sign-in (POST /api/auth/login, the bench owner) on the same console, measured in
// the same run, so the figure says what SSO costs over the sign-in it replaces. Never asserts.
//
//   BENCH_ROUNDS=30 npm run bench -- --only sso
import { pct } from "../engine/bench/lib";
import { freePort } from "../engine/test/helpers/free-port";
import { signInAtIdp, startTestIdp } from "../tests/helpers/oidc-idp";
import { startConsoleBench } from "./bench/console-harness";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const log = (s: string) => process.stderr.write(`[bench:sso] ${s}\n`);

const idpPort = await freePort();
process.env.BATON_SSO_ALLOWED_ISSUERS = `http://127.0.0.1:${idpPort}`;
const bench = await startConsoleBench("sso", { databaseUrl: process.env.DATABASE_URL });
const redirect = `${bench.origin}/api/auth/sso/callback`;
const users = Object.fromEntries(
  Array.from({ length: ROUNDS }, (_, i) => [
    `u${i}`,
    { email: `u${i}@bench-sso.test`, email_verified: true, groups: ["devs"] },
  ]),
);
const idp = await startTestIdp({
  port: idpPort,
  clients: [{ client_id: "baton-bench", client_secret: "bench-secret", redirect_uris: [redirect] }],
  users,
});
try {
  await bench.api("PUT", "/api/team/sso", {
    issuer: idp.issuer,
    client_id: "baton-bench",
    client_secret: "bench-secret",
    domains: ["bench-sso.test"],
    default_role: "member",
    group_claim: "groups",
    group_role_map: [{ group: "devs", role: "member" }],
  });
  // The bench owner set Baton up, so they are the instance owner who approves the team's domain;
  // before that nobody signs in through it (sso_domain_unapproved).
  await bench.api("POST", "/api/admin/sso-domains", { domain: "bench-sso.test" });
  const total: number[] = [];
  const baton: number[] = [];
  // The team's slug is the owner's: start by email (its domain names the team).
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const start = await fetch(`${bench.origin}/api/auth/sso/start?email=u${i}%40bench-sso.test`, {
      redirect: "manual",
    });
    const tStart = performance.now() - t0;
    const location = start.headers.get("location") ?? "";
    if (start.status !== 303 || !location.startsWith(idp.issuer))
      throw new Error(`start answered ${start.status} ${location}`);
    const callbackUrl = await signInAtIdp(location, `u${i}`, redirect);
    const t1 = performance.now();
    const back = await fetch(callbackUrl, { redirect: "manual" });
    const tCallback = performance.now() - t1;
    if (
      back.status !== 303 ||
      back.headers.get("location") !== "/sandboxes" ||
      back.headers.getSetCookie().length === 0
    )
      throw new Error(`callback answered ${back.status} ${back.headers.get("location")}`);
    total.push(performance.now() - t0);
    baton.push(tStart + tCallback);
  }
  // The reference: the password sign-in it replaces, as many rounds, on the same console.
  const password: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${bench.origin}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: bench.origin },
      body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`password sign-in answered ${res.status}`);
    password.push(performance.now() - t0);
  }
  const ref50 = pct(password, 50);
  const ref95 = pct(password, 95);
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${pct(xs, 50).toFixed(1)} | ${ref50.toFixed(1)} | ${(pct(xs, 50) / ref50).toFixed(2)}× | ${pct(xs, 95).toFixed(1)} | ${ref95.toFixed(1)} | ${(pct(xs, 95) / ref95).toFixed(2)}× |`;
  console.log(
    `\n### SSO sign-in (${ROUNDS} new people, JIT membership, ${process.env.DATABASE_URL ? "PostgreSQL" : "SQLite"})\n`,
  );
  console.log(
    "| what | p50 ms | reference p50 (password sign-in) | ratio | p95 ms | reference p95 | ratio |\n| --- | --- | --- | --- | --- | --- | --- |",
  );
  console.log(row("whole sign-in (start, IdP form, callback)", total));
  console.log(row("Baton's start + callback", baton));
  console.log(
    JSON.stringify({
      bench: "sso",
      rounds: ROUNDS,
      total_p50: pct(total, 50),
      total_p95: pct(total, 95),
      baton_p50: pct(baton, 50),
      baton_p95: pct(baton, 95),
      password_p50: ref50,
      password_p95: ref95,
    }),
  );
} finally {
  log("stopping");
  await idp.close();
  await bench.stop();
}

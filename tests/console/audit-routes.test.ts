import "server-only";
import { describe, expect, it } from "vitest";
import { GET as exportAudit } from "../../app/api/audit/export/route";
import { GET as listAudit } from "../../app/api/audit/route";
import { GET as getSettings, PATCH as patchSettings } from "../../app/api/audit/settings/route";
import { recordAudit } from "../../lib/server/db/audit";
import { addMember } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// The audit API: GET /api/audit (filters, `q`, keyset paging), GET /api/audit/export (exactly the
// filtered rows, CSV with the formula guard, JSON lines), GET/PATCH /api/audit/settings (owners only
// change them; the change and the refusal are both audited, with the request id the answer carries).

type Row = {
  id: string;
  action: string;
  result: string;
  actor_email: string | null;
  target_id: string | null;
  request_id: string | null;
  data: unknown;
};

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else if (c !== "\r") cell += c;
  }
  return rows;
}

describe.each(testBackends)("the audit API on $name", (backend) => {
  const ctx = useConsoleDb(backend);

  async function seeded() {
    const { user: owner, teamId } = await makeUser(ctx.db(), "owner");
    const { cookie } = await sessionCookie(ctx.db(), owner.id);
    const base = Date.UTC(2026, 2, 1, 9);
    for (let i = 0; i < 30; i++)
      await recordAudit(ctx.db(), {
        action: i % 2 ? "sandbox.terminate" : "sandbox.create",
        teamId,
        userId: owner.id,
        targetType: "sandbox",
        targetId: i === 7 ? '=HYPERLINK("http://evil.example")' : `sbx_${i % 4}`,
        result: i % 5 === 0 ? "forbidden" : "ok",
        userAgent: i === 3 ? '+cmd|" /C calc"!A0' : "vitest",
        now: base + i * 3_600_000,
      });
    return { owner, teamId: teamId!, cookie };
  }

  const list = async (cookie: string, qs: string) => {
    const res = await listAudit(request(`/api/audit?${qs}`, { cookie }), noParams);
    return {
      status: res.status,
      body: (await jsonOf(res)) as { items: Row[]; next_cursor: string | null; detail?: string },
    };
  };

  it("lists the team's rows newest first; the query box and the filters give the same rows; pages have no gaps", async () => {
    const { cookie } = await seeded();
    const all = await list(cookie, "limit=500");
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(30);

    const pairs: [string, string][] = [
      ["action=sandbox.terminate", "q=action:sandbox.terminate"],
      ["result=forbidden&target_type=sandbox", "q=" + encodeURIComponent("result:forbidden resource_type:sandbox")],
      ["target_id=sbx_2", "q=resource_id:sbx_2"],
      ["date_from=2026-03-01&date_to=2026-03-01", "q=" + encodeURIComponent("date_from:2026-03-01 date_to:2026-03-01")],
    ];
    for (const [filters, query] of pairs) {
      const a = await list(cookie, `${filters}&limit=500`);
      const b = await list(cookie, `${query}&limit=500`);
      expect(a.status, filters).toBe(200);
      expect(
        a.body.items.map((r) => r.id),
        filters,
      ).toEqual(b.body.items.map((r) => r.id));
      expect(a.body.items.length, filters).toBeGreaterThan(0);
      expect(a.body.items.length, filters).toBeLessThan(30);
    }
    expect((await list(cookie, "action=sandbox.terminate&limit=500")).body.items).toHaveLength(15);

    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof list>> = await list(cookie, `limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      paged.push(...page.body.items.map((r) => r.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all.body.items.map((r) => r.id));
  });

  it("answers a query it cannot read with 422 and a sentence, never a 500", async () => {
    const { cookie } = await seeded();
    for (const [qs, detail] of [
      ["q=terminate", /"terminate" is not a filter/],
      ["q=colour:red", /Unknown filter "colour"/],
      ["date_from=2026-02-30", /not a date/],
      ["q=action:sandbox.create&action=sandbox.terminate", /disagree/],
      ["cursor=bm9wZQ", /cursor/],
    ] as const) {
      const res = await list(cookie, qs);
      expect(res.status, qs).toBe(422);
      expect(res.body.detail, qs).toMatch(detail);
    }
  });

  it("exports exactly the filtered rows as CSV (formulas defused) and as JSON lines", async () => {
    const { cookie } = await seeded();
    for (const qs of ["", "action=sandbox.create", "q=" + encodeURIComponent("result:forbidden")]) {
      const listed = (await list(cookie, `${qs}&limit=500`)).body.items;
      const csvRes = await exportAudit(request(`/api/audit/export?format=csv&${qs}`, { cookie }), noParams);
      expect(csvRes.status).toBe(200);
      expect(csvRes.headers.get("content-type")).toMatch(/^text\/csv/);
      expect(csvRes.headers.get("content-disposition")).toMatch(/^attachment; filename="audit-.*\.csv"$/);
      const rows = parseCsv(await csvRes.text());
      const header = rows[0]!;
      const idAt = header.indexOf("id");
      // The export is audited (after the listing), so the listing is compared without it.
      const exported = rows.slice(1).map((r) => r[idAt]);
      expect(exported).toEqual(listed.map((r) => r.id));
      if (!qs) {
        const text = rows.map((r) => r.join(",")).join("\n");
        expect(text).toContain(`'=HYPERLINK`);
        expect(text).toContain(`'+cmd|`);
        expect(rows.slice(1).every((r) => !/^[=+\-@]/.test(r[header.indexOf("target_id")]!))).toBe(true);
      }
      const jsonl = await exportAudit(request(`/api/audit/export?format=jsonl&${qs}`, { cookie }), noParams);
      const lines = (await jsonl.text())
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Row);
      // The export is audited before it reads, and holds what was there below its own row: unfiltered,
      // the CSV export's row is in it; filtered, audit.export rows never match.
      const relisted = (await list(cookie, `${qs}&limit=500`)).body.items;
      const expected = qs ? relisted : relisted.slice(1);
      if (!qs) expect(relisted[0]).toMatchObject({ action: "audit.export" });
      expect(lines.map((r) => r.id)).toEqual(expected.map((r) => r.id));
      if (qs) expect(lines.map((r) => r.id)).toEqual(listed.map((r) => r.id));
    }
  });

  it("keeps teams apart, refuses members, and lets only owners change the settings (refusal and change audited)", async () => {
    const a = await seeded();
    const b = await makeUser(ctx.db(), "owner");
    const bCookie = (await sessionCookie(ctx.db(), b.user.id)).cookie;
    expect(
      (await list(bCookie, "limit=500")).body.items.every((r) => r.actor_email !== a.owner.email.toLowerCase()),
    ).toBe(true);

    const { user: admin } = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: a.teamId, userId: admin.id, role: "admin" });
    const { user: member } = await makeUser(ctx.db(), null);
    await addMember(ctx.db(), { teamId: a.teamId, userId: member.id, role: "member" });
    const adminCookie = (await sessionCookie(ctx.db(), admin.id)).cookie;
    const memberCookie = (await sessionCookie(ctx.db(), member.id)).cookie;

    expect((await list(memberCookie, "")).status).toBe(403);
    expect((await list(adminCookie, "")).status).toBe(200);
    expect((await getSettings(request("/api/audit/settings", { cookie: adminCookie }), noParams)).status).toBe(200);

    const refused = await patchSettings(
      request("/api/audit/settings", { method: "PATCH", cookie: adminCookie, body: { retention_days: 30 } }),
      noParams,
    );
    expect(refused.status).toBe(403);
    const requestId = refused.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_/);
    const denied = (await list(a.cookie, "result=forbidden&limit=500")).body.items.find(
      (r) => r.request_id === requestId,
    );
    expect(denied).toMatchObject({
      action: "audit.settings_update",
      result: "forbidden",
      actor_email: admin.email.toLowerCase(),
    });

    const ok = await patchSettings(
      request("/api/audit/settings", { method: "PATCH", cookie: a.cookie, body: { retention_days: 90 } }),
      noParams,
    );
    expect(ok.status).toBe(200);
    expect(await jsonOf(ok)).toMatchObject({ settings: { retention_days: 90, siem_url: null, siem_enabled: false } });
    const changed = (await list(a.cookie, "action=audit.settings_update")).body.items[0];
    expect(changed).toMatchObject({
      result: "ok",
      request_id: ok.headers.get("x-request-id"),
      data: { before: { retention_days: 365 }, after: { retention_days: 90 } },
    });

    for (const url of ["https://10.0.0.5/ingest", "https://127.0.0.1/x", "http://siem.example.com/x", "ftp://x"]) {
      const bad = await patchSettings(
        request("/api/audit/settings", { method: "PATCH", cookie: a.cookie, body: { siem_url: url } }),
        noParams,
      );
      expect(bad.status, url).toBe(422);
      expect(((await jsonOf(bad)) as { errors?: Record<string, string> }).errors?.siem_url, url).toBeTruthy();
    }
    const outOfRange = await patchSettings(
      request("/api/audit/settings", { method: "PATCH", cookie: a.cookie, body: { retention_days: 0 } }),
      noParams,
    );
    expect(outOfRange.status).toBe(422);
  });
});

import { describe, expect, it } from "vitest";
import {
  auditDateRange,
  auditFilterFromParams,
  auditFilterToParams,
  formatAuditQuery,
  parseAuditQuery,
  type AuditFilter,
} from "./audit-query";

describe("audit query syntax (Coder's)", () => {
  it("parses every key into the filter the controls make", () => {
    const q =
      "action:sandbox.terminate actor:Ana@Example.test resource_type:sandbox resource_id:sbx_1 result:forbidden date_from:2026-01-01 date_to:2026-01-31";
    expect(parseAuditQuery(q)).toEqual({
      ok: true,
      filter: {
        action: "sandbox.terminate",
        actor: "Ana@Example.test",
        targetType: "sandbox",
        targetId: "sbx_1",
        result: "forbidden",
        dateFrom: "2026-01-01",
        dateTo: "2026-01-31",
      },
    });
  });

  it("takes email: and username: for actor, quoted values, extra spaces, and an empty query", () => {
    expect(parseAuditQuery("  email:a@b.test  ")).toEqual({ ok: true, filter: { actor: "a@b.test" } });
    expect(parseAuditQuery("username:usr_1")).toEqual({ ok: true, filter: { actor: "usr_1" } });
    expect(parseAuditQuery('resource_id:"my volume"')).toEqual({ ok: true, filter: { targetId: "my volume" } });
    expect(parseAuditQuery("")).toEqual({ ok: true, filter: {} });
  });

  it("refuses free words, unknown keys, bad dates and actions, repeats, with a sentence that says what to write", () => {
    const err = (q: string) => {
      const r = parseAuditQuery(q);
      expect(r.ok).toBe(false);
      return r.ok ? "" : r.error;
    };
    expect(err("terminate")).toMatch(/"terminate" is not a filter: write key:value/);
    expect(err("action:sandbox.terminate oops")).toMatch(/"oops" is not a filter/);
    expect(err("colour:red")).toMatch(/Unknown filter "colour": the keys are action, actor/);
    expect(err("date_from:2026-13-01")).toMatch(/not a date: write it as YYYY-MM-DD/);
    expect(err("date_from:yesterday")).toMatch(/not a date/);
    expect(err("action:Terminate")).toMatch(/actions look like resource\.verb/);
    expect(err("action:")).toMatch(/has no value/);
    expect(err("action:a.b action:c.d")).toMatch(/given twice/);
    expect(err('resource_id:"open')).toMatch(/not closed/);
    expect(err("date_from:2026-02-01 date_to:2026-01-01")).toMatch(/is after date_to/);
  });

  it("formats a filter into a query that parses back to it, and the URL round-trips too", () => {
    const filters: AuditFilter[] = [
      {},
      { action: "auth.sign_in_failed" },
      { actor: "ana@example.test", targetType: "sandbox", targetId: "sbx 1", result: "ok" },
      { dateFrom: "2026-01-01", dateTo: "2026-01-02", result: "not_found" },
    ];
    for (const f of filters) {
      expect(parseAuditQuery(formatAuditQuery(f))).toEqual({ ok: true, filter: f });
      const params = new URLSearchParams(auditFilterToParams(f));
      expect(auditFilterFromParams(params)).toEqual(f);
    }
    expect(formatAuditQuery({ targetType: "sandbox", action: "sandbox.pause" })).toBe(
      "action:sandbox.pause resource_type:sandbox",
    );
  });

  it("turns dates into whole UTC days, the last one included", () => {
    expect(auditDateRange({ dateFrom: "2026-01-01", dateTo: "2026-01-01" })).toEqual({
      from: Date.UTC(2026, 0, 1),
      to: Date.UTC(2026, 0, 2),
    });
  });
});

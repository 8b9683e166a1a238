import "server-only";
import type { AuditFilter } from "../../audit-query";
import type { Db } from "../db/index";
import { allAuditEvents, auditEventView, type AuditEventView } from "./query";

// The export: exactly the rows the list shows for the same filter (the same query, read in pages),
// streamed as CSV or JSON lines. A CSV cell that a spreadsheet would run as a formula (=, +, -, @,
// tab, carriage return first) is prefixed with a quote, so an attacker-chosen value (a user agent,
// a target name) cannot become a formula in the admin's spreadsheet.

export const CSV_COLUMNS = [
  "created_at",
  "id",
  "actor_email",
  "actor_id",
  "credential",
  "action",
  "target_type",
  "target_id",
  "result",
  "ip",
  "user_agent",
  "request_id",
  "data",
] as const;

export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRow(e: AuditEventView): string {
  return `${CSV_COLUMNS.map((c) => csvCell(e[c])).join(",")}\r\n`;
}

export function exportStream(
  db: Db,
  teamId: string,
  filter: AuditFilter,
  format: "csv" | "jsonl",
  below: string | null = null,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const rows = allAuditEvents(db, teamId, filter, undefined, below);
  let headerSent = format !== "csv";
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(enc.encode(`${CSV_COLUMNS.join(",")}\r\n`));
        return;
      }
      // A batch per pull: fewer, larger chunks.
      let out = "";
      for (let i = 0; i < 200; i++) {
        const next = await rows.next();
        if (next.done) {
          if (out) controller.enqueue(enc.encode(out));
          controller.close();
          return;
        }
        const view = auditEventView(next.value);
        out += format === "csv" ? csvRow(view) : `${JSON.stringify(view)}\n`;
      }
      controller.enqueue(enc.encode(out));
    },
    async cancel() {
      await rows.return(undefined);
    },
  });
}

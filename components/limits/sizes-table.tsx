import { formatMebibytes } from "../../lib/format";
import { Badge } from "../ui/badge";
import type { SizeRow } from "./limits-model";
import { TableScroll } from "../ui/table";

const STATUS: Record<SizeRow["status"], { label: string; variant: "success" | "warning" | "neutral" }> = {
  available: { label: "Available", variant: "success" },
  "not-on-plan": { label: "Not on your plan", variant: "neutral" },
  "too-big-for-host": { label: "Too big for this machine", variant: "warning" },
};

/** The size menu: each size's CPU and memory, whether it can be created, and why not. */
export function SizesTable({ rows }: { rows: SizeRow[] }) {
  if (rows.length === 0) return <p className="text-sm text-muted-foreground">The server reports no size menu.</p>;
  return (
    // Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too.
    <TableScroll tabIndex={0} role="region" aria-label="Sizes">
      <table className="w-full min-w-[36rem] text-sm" data-testid="sizes-table">
        <caption className="sr-only">Sandbox sizes and whether you can create them</caption>
        <thead>
          <tr className="border-b text-left text-xs text-muted-foreground">
            <th scope="col" className="py-2 pr-4 font-medium">
              Size
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              vCPU
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Memory
            </th>
            <th scope="col" className="py-2 pr-4 font-medium">
              Status
            </th>
            <th scope="col" className="py-2 font-medium">
              Why
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.size} className="border-b last:border-0" data-testid={`size-${r.size}`}>
              <th scope="row" className="py-2 pr-4 text-left font-mono font-medium">
                {r.size}
              </th>
              <td className="py-2 pr-4 tabular-nums" data-testid="size-cpu">
                {r.cpu ?? "—"}
              </td>
              <td className="py-2 pr-4 whitespace-nowrap tabular-nums" data-testid="size-memory">
                {formatMebibytes(r.memoryMb)}
              </td>
              <td className="py-2 pr-4">
                <Badge variant={STATUS[r.status].variant} data-testid="size-status">
                  {STATUS[r.status].label}
                </Badge>
              </td>
              <td className="py-2 text-muted-foreground" data-testid="size-reason">
                {r.reason}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

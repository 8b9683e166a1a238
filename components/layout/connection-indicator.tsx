"use client";

import { useQuery } from "@tanstack/react-query";
import { connectionQueries } from "../../lib/queries/connections";
import type { ConnectionStatusDto } from "../../lib/validations/connections";
import { ConnectionStatus, type ConnectionStatusProps } from "./connection-status";
import { errorText } from "../../lib/orkestr/errors";
import { formatClock, toMs } from "../../lib/format";

/** The header's view of a status answer: which API (name + host) and whether it answers. */
export function statusProps(status: ConnectionStatusDto): ConnectionStatusProps {
  if (status.state === "none" || !status.connection) {
    return {
      label: "No orkestr API",
      baseUrl: "",
      state: status.state === "error" ? "error" : "none",
      detail: status.detail ?? "Add a connection in Settings → Connections",
    };
  }
  const checkedAt = toMs(status.checked_at);
  const c = status.connection;
  return {
    label: `${c.name} · ${c.host}`,
    baseUrl: c.base_url,
    state: status.state,
    detail:
      status.detail ??
      (status.state === "ok" && checkedAt !== null ? `Answered at ${formatClock(checkedAt)}` : undefined),
  };
}

/**
 * The live status indicator: server-rendered from `initial`, then polled every
 * CONNECTION_STATUS_POLL_MS (and refreshed whenever a connection changes). Without a connection it
 * links to Settings → Connections.
 */
export function ConnectionIndicator({ initial }: { initial: ConnectionStatusDto }) {
  const { data, error } = useQuery({ ...connectionQueries.status(), initialData: initial });
  const props: ConnectionStatusProps = error
    ? {
        label: data.connection ? `${data.connection.name} · ${data.connection.host}` : "orkestr API",
        baseUrl: data.connection?.base_url ?? "",
        state: "error",
        detail: errorText(error),
      }
    : statusProps(data);
  if (props.state === "none" || !data.connection) {
    return <ConnectionStatus {...props} href="/settings/connections" className="hover:bg-accent" />;
  }
  return <ConnectionStatus {...props} />;
}

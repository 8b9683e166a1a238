import { OrkestrConnectionError, OrkestrError } from "../errors";
import type { RequestOptions } from "../core";
import { paginate } from "../pagination";
import { path, type Query } from "../path";
import { APIResource } from "../resource";
import { parseStream } from "../stream";
import type { Page } from "../schemas/common";
import { SandboxEvent, type ListEventsQuery } from "../schemas/events";
import { Limits } from "../schemas/limits";
import { Metrics } from "../schemas/metrics";
import {
  Sandbox,
  SetTimeoutResult,
  type CreateSandboxBody,
  type ListSandboxesQuery,
  type ResumeSandboxBody,
  type UpdateSandboxBody,
} from "../schemas/sandboxes";
import { Usage, type UsageQuery } from "../schemas/usage";

/** Statuses meaning "this route does not exist here" when probing a path and its alias. */
const ROUTE_MISSING = new Set([404, 405]);

export class Sandboxes extends APIResource {
  // POST /v1/sandboxes – create; Idempotency-Key makes retries safe, 503 fleet_full is retried
  async create(body: CreateSandboxBody, options?: RequestOptions): Promise<Sandbox> {
    return this.core.json({ method: "POST", path: "/sandboxes", body, idempotencyKey: true, schema: Sandbox, options });
  }

  // GET /v1/sandboxes/{id}
  async get(id: string, options?: RequestOptions): Promise<Sandbox> {
    return this.core.json({ method: "GET", path: path`/sandboxes/${id}`, schema: Sandbox, options });
  }

  // GET /v1/sandboxes – one page, newest first
  async list(query: ListSandboxesQuery = {}, options?: RequestOptions): Promise<Page<Sandbox>> {
    return this.core.list({
      method: "GET",
      path: "/sandboxes",
      query: sandboxListQuery(query),
      item: Sandbox,
      options,
    });
  }

  /** Every sandbox matching `query`, page after page. */
  listAll(query: ListSandboxesQuery = {}, options?: RequestOptions): AsyncGenerator<Sandbox, void, undefined> {
    return paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  // PATCH /v1/sandboxes/{id} – metadata, timeout_seconds, auto_resume, on_timeout
  async update(id: string, body: UpdateSandboxBody, options?: RequestOptions): Promise<Sandbox> {
    return this.core.json({ method: "PATCH", path: path`/sandboxes/${id}`, body, schema: Sandbox, options });
  }

  /** Alias of update(). */
  async patch(id: string, body: UpdateSandboxBody, options?: RequestOptions): Promise<Sandbox> {
    return this.update(id, body, options);
  }

  // DELETE /v1/sandboxes/{id} – terminate (idempotent: 204 again for a terminated sandbox)
  async terminate(id: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/sandboxes/${id}`, options });
  }

  // POST /v1/sandboxes/{id}/pause – idempotent on the server, so safe to retry
  async pause(id: string, options?: RequestOptions): Promise<Sandbox> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/pause`,
      idempotent: true,
      schema: Sandbox,
      options,
    });
  }

  // POST /v1/sandboxes/{id}/resume – 503 fleet_full is retried honouring Retry-After
  async resume(id: string, body: ResumeSandboxBody = {}, options?: RequestOptions): Promise<Sandbox> {
    return this.core.json({ method: "POST", path: path`/sandboxes/${id}/resume`, body, schema: Sandbox, options });
  }

  // POST /v1/sandboxes/{id}/timeout – expires_at = now + timeout_seconds
  async setTimeout(id: string, timeoutSeconds: number, options?: RequestOptions): Promise<SetTimeoutResult> {
    return this.core.json({
      method: "POST",
      path: path`/sandboxes/${id}/timeout`,
      body: { timeout_seconds: timeoutSeconds },
      idempotent: true,
      schema: SetTimeoutResult,
      options,
    });
  }

  // GET /v1/sandboxes/limits, falling back to the /v1/limits alias where the first is missing
  async limits(options?: RequestOptions): Promise<Limits> {
    return withAlias(
      () => this.core.json({ method: "GET", path: "/sandboxes/limits", schema: Limits, options }),
      () => this.core.json({ method: "GET", path: "/limits", schema: Limits, options }),
    );
  }

  // GET /v1/sandboxes/usage (alias /v1/usage) – ?from=&to=&granularity=&sandbox_id=
  async usage(query: UsageQuery = {}, options?: RequestOptions): Promise<Usage> {
    return withAlias(
      () => this.core.json({ method: "GET", path: "/sandboxes/usage", query, schema: Usage, options }),
      () => this.core.json({ method: "GET", path: "/usage", query, schema: Usage, options }),
    );
  }

  // GET /v1/sandboxes/{id}/metrics?since= – RFC 3339, unix seconds, or a Date
  async metrics(id: string, since?: Date | string | number, options?: RequestOptions): Promise<Metrics> {
    return this.core.json({
      method: "GET",
      path: path`/sandboxes/${id}/metrics`,
      query: { since: sinceParam(since) },
      schema: Metrics,
      options,
    });
  }

  // GET /v1/sandboxes/{id}/events – one page of the activity timeline, oldest first
  async events(id: string, query: ListEventsQuery = {}, options?: RequestOptions): Promise<Page<SandboxEvent>> {
    return this.core.list({
      method: "GET",
      path: path`/sandboxes/${id}/events`,
      query: eventsQuery(query),
      item: SandboxEvent,
      keys: ["events"],
      options,
    });
  }

  /** The whole timeline, page after page. */
  allEvents(
    id: string,
    query: ListEventsQuery = {},
    options?: RequestOptions,
  ): AsyncGenerator<SandboxEvent, void, undefined> {
    return paginate((cursor) => this.events(id, { ...query, cursor }, options), query.cursor);
  }

  // GET /v1/sandboxes/{id}/events?follow=true – backlog then live events over SSE, until aborted
  followEvents(
    id: string,
    query: Omit<ListEventsQuery, "limit"> = {},
    options: RequestOptions & { maxReconnects?: number } = {},
  ): AsyncGenerator<SandboxEvent, void, undefined> {
    return this.follow(id, query, options);
  }

  /**
   * GET /v1/sandboxes/{id}/events?follow=true – the upstream SSE Response, body unread, for
   * unbuffered proxying; `cursor` resumes after that event id.
   */
  async followEventsRaw(
    id: string,
    query: Omit<ListEventsQuery, "limit"> = {},
    options?: RequestOptions,
  ): Promise<Response> {
    return this.core.response({
      method: "GET",
      path: path`/sandboxes/${id}/events`,
      query: { ...eventsQuery(query), follow: "true" },
      headers: { Accept: "text/event-stream", ...(query.cursor ? { "Last-Event-ID": query.cursor } : {}) },
      options,
    });
  }

  private async *follow(
    id: string,
    query: Omit<ListEventsQuery, "limit">,
    options: RequestOptions & { maxReconnects?: number },
  ): AsyncGenerator<SandboxEvent, void, undefined> {
    const maxReconnects = options.maxReconnects ?? this.core.maxRetries;
    const req = { method: "GET" as const, path: path`/sandboxes/${id}/events` };
    let cursor = query.cursor;
    let failures = 0;
    for (;;) {
      const response = await this.followEventsRaw(id, { ...query, cursor }, options);
      if (!response.body) throw this.core.parseError(req, response, "the event stream has no body", "");
      try {
        for await (const frame of parseStream(response.body, { signal: options.signal, source: this.core.baseUrl })) {
          failures = 0;
          if (frame.id) cursor = frame.id;
          const event = SandboxEvent.safeParse(frame.data);
          if (!event.success)
            throw this.core.parseError(
              req,
              response,
              `an event frame does not match the contract: ${event.error.issues[0]?.message ?? "invalid"}`,
              frame.text.slice(0, 300),
            );
          yield event.data;
        }
        return; // the server ended the stream
      } catch (e) {
        if (options.signal?.aborted) return;
        // Reconnect from the last event id after a broken connection, a bounded number of times.
        if (!(e instanceof OrkestrConnectionError) || ++failures > maxReconnects) throw e;
        await this.core.delay(this.core.backoff(failures - 1), options.signal).catch(() => undefined);
        if (options.signal?.aborted) return;
      }
    }
  }
}

async function withAlias<T>(primary: () => Promise<T>, alias: () => Promise<T>): Promise<T> {
  try {
    return await primary();
  } catch (e) {
    if (e instanceof OrkestrError && ROUTE_MISSING.has(e.status)) return alias();
    throw e;
  }
}

function sandboxListQuery(q: ListSandboxesQuery): Query {
  const out: Query = {
    limit: q.limit,
    cursor: q.cursor,
    template: q.template,
    region: q.region,
    snapshot: q.snapshot,
  };
  if (q.status !== undefined) out.status = Array.isArray(q.status) ? q.status.join(",") : q.status;
  for (const [k, v] of Object.entries(q.metadata ?? {})) out[`metadata[${k}]`] = v;
  return out;
}

function eventsQuery(q: ListEventsQuery): Query {
  return { limit: q.limit, cursor: q.cursor, type: Array.isArray(q.type) ? q.type.join(",") : q.type };
}

function sinceParam(since: Date | string | number | undefined): string | undefined {
  if (since === undefined) return undefined;
  if (since instanceof Date) return since.toISOString();
  return String(since);
}

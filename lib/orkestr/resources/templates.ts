import type { RequestOptions } from "../core";
import { paginate } from "../pagination";
import { path } from "../path";
import { APIResource } from "../resource";
import { isTerminalFrame, parseStream } from "../stream";
import type { Page } from "../schemas/common";
import {
  Template,
  TemplateBuildError,
  TemplateLogLine,
  TemplateLogs,
  type CreateTemplateBody,
  type ListTemplatesQuery,
  type TemplateStatus,
} from "../schemas/templates";

/** What followLogs() yields: build lines, then one final frame with the outcome. */
export type TemplateLogEvent =
  | { type: "line"; line: TemplateLogLine }
  | { type: "final"; status: TemplateStatus | null; error: TemplateBuildError | string | null; raw: unknown };

export class Templates extends APIResource {
  // POST /v1/templates – start a build (202, status building)
  async create(body: CreateTemplateBody, options?: RequestOptions): Promise<Template> {
    return this.core.json({
      method: "POST",
      path: "/templates",
      body,
      idempotencyKey: true,
      schema: Template,
      options,
    });
  }

  // GET /v1/templates[?include_builtin=true]
  async list(query: ListTemplatesQuery = {}, options?: RequestOptions): Promise<Page<Template>> {
    return this.core.list({ method: "GET", path: "/templates", query, item: Template, keys: ["templates"], options });
  }

  listAll(query: ListTemplatesQuery = {}, options?: RequestOptions): AsyncGenerator<Template, void, undefined> {
    return paginate((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  // GET /v1/templates/{id}
  async get(id: string, options?: RequestOptions): Promise<Template> {
    return this.core.json({ method: "GET", path: path`/templates/${id}`, schema: Template, options });
  }

  // DELETE /v1/templates/{id} – templates are immutable: there is no update
  async delete(id: string, options?: RequestOptions): Promise<void> {
    return this.core.void({ method: "DELETE", path: path`/templates/${id}`, options });
  }

  // GET /v1/templates/{id}/logs?cursor=&limit= – one page of build output
  async logs(
    id: string,
    query: { cursor?: string | number; limit?: number } = {},
    options?: RequestOptions,
  ): Promise<TemplateLogs> {
    return this.core.json({ method: "GET", path: path`/templates/${id}/logs`, query, schema: TemplateLogs, options });
  }

  // GET /v1/templates/{id}/logs?follow=true – live build output until the final frame
  followLogs(
    id: string,
    query: { cursor?: string | number } = {},
    options: RequestOptions = {},
  ): AsyncGenerator<TemplateLogEvent, void, undefined> {
    return this.follow(id, query, options);
  }

  /** GET /v1/templates/{id}/logs?follow=true – the upstream SSE Response, body unread, for unbuffered proxying. */
  async followLogsRaw(
    id: string,
    query: { cursor?: string | number } = {},
    options?: RequestOptions,
  ): Promise<Response> {
    return this.core.response({
      method: "GET",
      path: path`/templates/${id}/logs`,
      query: { ...query, follow: "true" },
      headers: { Accept: "text/event-stream" },
      options,
    });
  }

  private async *follow(
    id: string,
    query: { cursor?: string | number },
    options: RequestOptions,
  ): AsyncGenerator<TemplateLogEvent, void, undefined> {
    const req = { method: "GET" as const, path: path`/templates/${id}/logs` };
    const response = await this.followLogsRaw(id, query, options);
    if (!response.body) throw this.core.parseError(req, response, "the log stream has no body", "");
    for await (const frame of parseStream(response.body, { signal: options.signal, source: this.core.baseUrl })) {
      if (
        isTerminalFrame(frame.data) ||
        (frame.data && typeof frame.data === "object" && (frame.data as { done?: unknown }).done === true)
      ) {
        const o = frame.data as { status?: unknown; error?: unknown };
        const err = TemplateBuildError.safeParse(o.error);
        yield {
          type: "final",
          status: typeof o.status === "string" ? o.status : null,
          error: err.success ? err.data : typeof o.error === "string" ? o.error : null,
          raw: frame.data,
        };
        return;
      }
      const line = TemplateLogLine.safeParse(frame.data);
      if (!line.success)
        throw this.core.parseError(
          req,
          response,
          "a build log frame does not match the contract",
          frame.text.slice(0, 300),
        );
      yield { type: "line", line: line.data };
    }
  }
}

import { z } from "zod";
import { ListQuery, Num, openEnum, Timestamp } from "./common";

/** GET /v1/base-images: `id`, `description` (ids per seed 000). The local engine adds maps_to/available/gaps. */
export const BaseImage = z
  .object({
    id: z.string(),
    description: z.string().nullish(),
    maps_to: z.string().nullish(),
    available: z.boolean().nullish(),
    gaps: z.array(z.string()).nullish(),
  })
  .loose();
export type BaseImage = z.infer<typeof BaseImage>;

export const TemplateStatus = openEnum(["queued", "building", "ready", "failed"]);
export type TemplateStatus = z.infer<typeof TemplateStatus>;

/** GET /v1/templates/{id} `error` when the build failed: the failing step, its exit code and its output. */
export const TemplateBuildError = z
  .object({
    step_index: Num.nullish(),
    step: z.string().nullish(),
    exit_code: Num.nullish(),
    output: z.string().nullish(),
  })
  .loose();
export type TemplateBuildError = z.infer<typeof TemplateBuildError>;

/** A custom template (or a built-in with `builtin: true` under `?include_builtin=true`). */
export const Template = z
  .object({
    id: z.string(),
    name: z.string().nullish(),
    base_image: z.string().nullish(),
    steps: z.array(z.string()).nullish(),
    status: TemplateStatus.nullish(),
    builtin: z.boolean().nullish(),
    size_mb: Num.nullish(),
    error: z.union([TemplateBuildError, z.string()]).nullish(),
    created_at: Timestamp.nullish(),
    ready_at: Timestamp.nullish(),
  })
  .loose();
export type Template = z.infer<typeof Template>;

export const CreateTemplateBody = z.object({
  name: z.string().min(1).max(128),
  base_image: z.string().min(1),
  steps: z.array(z.string().min(1)).default([]),
  env: z.record(z.string(), z.string()).optional(),
});
export type CreateTemplateBody = z.input<typeof CreateTemplateBody>;

export const ListTemplatesQuery = ListQuery.extend({ include_builtin: z.boolean().optional() });
export type ListTemplatesQuery = z.input<typeof ListTemplatesQuery>;

/** One build log line: GET /v1/templates/{id}/logs, field `lines[]` (`seq`, `t`, `step_index`, `stream`, `data`). */
export const TemplateLogLine = z
  .object({
    seq: Num.nullish(),
    t: Timestamp.nullish(),
    step_index: Num.nullish(),
    stream: z.string().nullish(),
    data: z
      .string()
      .nullish()
      .transform((d) => d ?? ""),
  })
  .loose();
export type TemplateLogLine = z.infer<typeof TemplateLogLine>;

/** GET /v1/templates/{id}/logs (paged JSON). */
export const TemplateLogs = z
  .object({
    template_id: z.string().nullish(),
    status: TemplateStatus.nullish(),
    lines: z
      .array(TemplateLogLine)
      .nullish()
      .transform((l) => l ?? []),
    next_cursor: z.union([z.string(), z.number()]).nullish(),
    done: z.boolean().nullish(),
  })
  .loose();
export type TemplateLogs = z.infer<typeof TemplateLogs>;

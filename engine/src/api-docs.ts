import type { OpenAPIV3_1 } from "openapi-types";

/**
 * docs/api.md: the OpenAPI document as a page to read, one section per operation with its
 * parameters, request fields and response fields. Generated with docs/openapi.json by
 * `npm run openapi`; the drift test compares both.
 */
type Schema = OpenAPIV3_1.SchemaObject & { $ref?: string };

export function renderApiMarkdown(doc: OpenAPIV3_1.Document): string {
  const schemas = (doc.components?.schemas ?? {}) as Record<string, Schema>;
  const resolve = (s: Schema | undefined): Schema => {
    let cur = s ?? {};
    for (let i = 0; cur.$ref && i < 10; i++) cur = schemas[cur.$ref.split("/").pop()!] ?? {};
    return cur;
  };
  const typeOf = (raw: Schema | undefined): string => {
    if (!raw) return "any";
    if (raw.$ref) return `\`${raw.$ref.split("/").pop()}\``;
    if (raw.enum) return raw.enum.map((v) => JSON.stringify(v)).join(" \\| ");
    if (raw.const !== undefined) return JSON.stringify(raw.const);
    if (raw.anyOf ?? raw.oneOf) return (raw.anyOf ?? raw.oneOf)!.map((x) => typeOf(x as Schema)).join(" \\| ");
    if (raw.type === "array") return `${typeOf(raw.items as Schema)}[]`;
    if (raw.type === "object" && raw.additionalProperties && !raw.properties)
      return `map of ${typeOf(raw.additionalProperties as Schema)}`;
    return [raw.type ?? "any"].flat().join(" \\| ");
  };
  const cell = (s: string | undefined) => (s ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ");
  const fields = (raw: Schema | undefined, out: string[]): void => {
    let s = resolve(raw);
    if (s.type === "array") s = resolve(s.items as Schema);
    if (!s.properties) return void out.push(`Type: ${typeOf(raw)}`, "");
    out.push("| Field | Type | Required | Description |", "| --- | --- | --- | --- |");
    for (const [name, p] of Object.entries(s.properties)) {
      const prop = p as Schema;
      const req = s.required?.includes(name) ? "yes" : "";
      const note = [prop.description, prop.default !== undefined ? `default ${JSON.stringify(prop.default)}` : ""]
        .filter(Boolean)
        .join("; ");
      out.push(`| \`${name}\` | ${typeOf(prop)} | ${req} | ${cell(note)} |`);
    }
    out.push("");
  };

  const out: string[] = [
    `# ${doc.info.title}`,
    "",
    "<!-- Generated from docs/openapi.json by `npm run openapi`; do not edit by hand. -->",
    "",
    doc.info.description ?? "",
    "",
  ];
  const ops: { tag: string; method: string; path: string; op: OpenAPIV3_1.OperationObject }[] = [];
  for (const [p, item] of Object.entries(doc.paths ?? {}))
    for (const method of ["get", "head", "post", "put", "patch", "delete"] as const) {
      const op = item?.[method];
      if (op) ops.push({ tag: op.tags?.[0] ?? "other", method: method.toUpperCase(), path: p, op });
    }
  const tags = [...new Set(ops.map((o) => o.tag))];
  out.push("## Contents", "");
  for (const tag of tags) {
    out.push(`- **${tag}**`);
    for (const o of ops.filter((x) => x.tag === tag)) out.push(`  - \`${o.method} ${o.path}\`: ${o.op.summary ?? ""}`);
  }
  out.push("");
  for (const tag of tags) {
    out.push(`## ${tag}`, "");
    for (const { method, path: p, op } of ops.filter((x) => x.tag === tag)) {
      out.push(`### \`${method} ${p}\``, "", op.summary ?? "", "");
      const params = (op.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
      if (params.length) {
        out.push(
          "**Parameters**",
          "",
          "| Name | In | Type | Required | Description |",
          "| --- | --- | --- | --- | --- |",
        );
        for (const prm of params)
          out.push(
            `| \`${prm.name}\` | ${prm.in} | ${typeOf(prm.schema as Schema)} | ${prm.required ? "yes" : ""} | ${cell(prm.description)} |`,
          );
        out.push("");
      }
      const body = (op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content?.["application/json"];
      if (body) {
        out.push("**Request body**", "");
        fields(body.schema as Schema, out);
      }
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        if (status === "4XX") continue;
        const res = r as OpenAPIV3_1.ResponseObject;
        const json = res.content?.["application/json"];
        out.push(`**Response ${status}**${json ? "" : `: ${res.description ?? "no body"}`}`, "");
        if (json) fields(json.schema as Schema, out);
      }
    }
  }
  out.push("## Schemas", "");
  for (const [name, s] of Object.entries(schemas)) {
    if (name.endsWith("Input")) continue;
    out.push(`### ${name}`, "");
    fields(s, out);
  }
  return (
    out
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trimEnd() + "\n"
  );
}

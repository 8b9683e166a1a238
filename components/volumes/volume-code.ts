// Each volume action as code (Python SDK, JS SDK, curl), built from lib/code/snippet.ts. The SDK
// calls are the orkestr SDK's Volume class (create, list, update, move, delete); the JS SDK takes
// the same arguments with camelCased option names. Never a token: ORKESTR_API_KEY is read from the
// environment.

import {
  apiUrl,
  baseUrlNote,
  camel,
  curlRequest,
  HOSTED_API,
  jsOptions,
  jsValue,
  pyKwargs,
  pyValue,
  type Snippets,
} from "../../lib/code/snippet";
import type { CreateVolumeBody, UpdateVolumeBody } from "../../lib/orkestr/schemas/volumes";

function python(baseUrl: string, body: string): string {
  return `from orkestr import Volume\n\n# The API key comes from ORKESTR_API_KEY.\n${baseUrlNote(baseUrl, "#")}${body}`;
}

function javascript(baseUrl: string, body: string): string {
  return `import { Volume } from "orkestr";\n\n// The API key comes from ORKESTR_API_KEY.\n${baseUrlNote(baseUrl, "//")}${body}`;
}

const volumePath = (ref: string) => `/v1/volumes/${encodeURIComponent(ref)}` as const;

export function createVolumeCode(body: CreateVolumeBody, baseUrl: string = HOSTED_API): Snippets {
  const { name, ...options } = body;
  const py = pyKwargs(options);
  const js = jsOptions(options);
  return {
    python: python(
      baseUrl,
      `vol = Volume.create(${pyValue(name)}${py ? `, ${py}` : ""})\nprint(vol.id, vol.region, vol.status)\n`,
    ),
    javascript: javascript(
      baseUrl,
      `const vol = await Volume.create(${jsValue(name)}${js === "{}" ? "" : `, ${js}`});\nconsole.log(vol.id, vol.region, vol.status);\n`,
    ),
    curl: curlRequest({ method: "POST", url: apiUrl(baseUrl, "/v1/volumes"), body, idempotent: true }),
  };
}

/** PATCH: grow (size_gb) or set / clear (null) the lifetime. */
export function updateVolumeCode(id: string, body: UpdateVolumeBody, baseUrl: string = HOSTED_API): Snippets {
  // Keyword arguments keep None (a clear); pyKwargs would drop it.
  const py = Object.entries(body)
    .map(([k, v]) => `${k}=${pyValue(v)}`)
    .join(", ");
  const js = `{ ${Object.entries(body)
    .map(([k, v]) => `${camel(k)}: ${jsValue(v)}`)
    .join(", ")} }`;
  return {
    python: python(baseUrl, `Volume.update(${pyValue(id)}, ${py})\n`),
    javascript: javascript(baseUrl, `await Volume.update(${jsValue(id)}, ${js});\n`),
    curl: curlRequest({ method: "PATCH", url: apiUrl(baseUrl, volumePath(id)), body }),
  };
}

export function moveVolumeCode(id: string, region: string, baseUrl: string = HOSTED_API): Snippets {
  const wait =
    '# The move runs in the background: the volume reads status "moving" until it is done,\n# and a volume.moved webhook event says when.\n';
  return {
    python: python(baseUrl, `${wait}Volume.move(${pyValue(id)}, ${pyValue(region)})\n`),
    javascript: javascript(
      baseUrl,
      `${wait.replace(/^#/gm, "//")}await Volume.move(${jsValue(id)}, ${jsValue(region)});\n`,
    ),
    curl: `${wait}${curlRequest({ method: "POST", url: apiUrl(baseUrl, `${volumePath(id)}/move`), body: { region } })}`,
  };
}

export function deleteVolumeCode(id: string, baseUrl: string = HOSTED_API): Snippets {
  const note = "# Refused (409 volume_in_use) while a sandbox holds the volume: terminate it first.\n";
  return {
    python: python(baseUrl, `${note}Volume.delete(${pyValue(id)})\n`),
    javascript: javascript(baseUrl, `${note.replace(/^#/gm, "//")}await Volume.delete(${jsValue(id)});\n`),
    curl: `${note}${curlRequest({ method: "DELETE", url: apiUrl(baseUrl, volumePath(id)) })}`,
  };
}

/** Attaching happens at sandbox create: name the volume, and /persist is it. */
export function attachVolumeCode(name: string, baseUrl: string = HOSTED_API): Snippets {
  return {
    python: `from orkestr import Sandbox\n\n# The API key comes from ORKESTR_API_KEY.\n${baseUrlNote(baseUrl, "#")}sbx = Sandbox.create(volume=${pyValue(name)})\nprint(sbx.volume)  # mounted at /persist\n`,
    javascript: `import { Sandbox } from "orkestr";\n\n// The API key comes from ORKESTR_API_KEY.\n${baseUrlNote(baseUrl, "//")}const sbx = await Sandbox.create({ volume: ${jsValue(name)} });\nconsole.log(sbx.volume); // mounted at /persist\n`,
    curl: curlRequest({
      method: "POST",
      url: apiUrl(baseUrl, "/v1/sandboxes"),
      body: { volume: name },
      idempotent: true,
    }),
  };
}

"use client";

import type { CreateSandboxBody } from "../../../lib/orkestr/schemas/sandboxes";
import { CodeTabs } from "../../ui/code-tabs";
import { curlCode, javascriptCode, pythonCode } from "./request-code";

/** The create form's request as code. */
export function ShowCode({ body, baseUrl }: { body: CreateSandboxBody; baseUrl?: string }) {
  return (
    <CodeTabs
      snippets={{
        python: pythonCode(body, baseUrl),
        javascript: javascriptCode(body, baseUrl),
        curl: curlCode(body, baseUrl),
      }}
    />
  );
}

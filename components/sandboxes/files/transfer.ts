"use client";

import type { PresignedUrl } from "../../../lib/orkestr/schemas/files";
import { apiError, unreachable } from "../../../lib/api/core";

// Browser-only transfers of the Files tab (XMLHttpRequest, the DOM): kept out of lib/, which is
// also compiled for Node.

/**
 * PUTs a file to a presigned (same-origin) URL with XMLHttpRequest, the one browser API that reports
 * upload progress. Errors are the browser core's (lib/api/core.ts), with the server's `{detail, code}`.
 */
export function uploadWithProgress(
  presigned: PresignedUrl,
  file: Blob,
  onProgress: (loaded: number, total: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(presigned.method ?? "PUT", presigned.url);
    // Content-Type from the upstream's answer; Baton's route streams the body whatever its type.
    for (const [k, v] of Object.entries(presigned.headers ?? {})) xhr.setRequestHeader(k, v);
    xhr.setRequestHeader("accept", "application/json");
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      const headers = new Headers();
      const retryAfter = xhr.getResponseHeader("retry-after");
      if (retryAfter) headers.set("retry-after", retryAfter);
      headers.set("content-type", xhr.getResponseHeader("content-type") ?? "");
      reject(
        apiError({
          status: xhr.status,
          statusText: xhr.statusText,
          headers,
          text: xhr.responseText,
          method: "PUT",
          url: presigned.url,
        }),
      );
    };
    xhr.onerror = () =>
      reject(unreachable({ detail: "The upload was interrupted: the Baton server could not be reached." }));
    xhr.onabort = () => reject(new DOMException("The upload was cancelled.", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}

/** Starts a browser download of a same-origin URL (Baton's files/raw answers with Content-Disposition: attachment). */
export function startDownload(url: string, name: string): void {
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.rel = "noopener";
  document.body.appendChild(a);
  a.click();
  a.remove();
}

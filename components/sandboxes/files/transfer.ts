"use client";

import type { PresignedUrl } from "../../../lib/orkestr/schemas/files";
import { ApiError } from "../../../lib/queries/api";

// Browser-only transfers of the Files tab (XMLHttpRequest, the DOM): kept out of lib/, which is
// also compiled for Node.

/**
 * PUTs a file to a presigned (same-origin) URL with XMLHttpRequest, the one browser API that reports
 * upload progress. Errors carry the server's `{detail, code}` like apiFetch's.
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
      let body: { detail?: unknown; code?: unknown } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        // not JSON: the status line says enough
      }
      reject(
        new ApiError(
          xhr.status,
          typeof body.code === "string" ? body.code : "error",
          typeof body.detail === "string" && body.detail
            ? body.detail
            : `The server answered ${xhr.status}${xhr.statusText ? ` ${xhr.statusText}` : ""}.`,
        ),
      );
    };
    xhr.onerror = () =>
      reject(new ApiError(0, "network_error", "The upload was interrupted: the Baton server could not be reached."));
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

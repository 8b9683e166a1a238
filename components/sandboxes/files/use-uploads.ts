"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { fileKeys, fileMutations, joinPath, JSON_UPLOAD_MAX_BYTES } from "../../../lib/queries/files";
import { uploadWithProgress } from "./transfer";
import { errorText } from "../../../lib/orkestr/errors";

export interface Upload {
  key: number;
  name: string;
  path: string;
  size: number;
  loaded: number;
  status: "queued" | "uploading" | "done" | "error" | "cancelled";
  error?: string;
}

/**
 * The upload queue of the Files tab, one file at a time (a sandbox's disk and Baton's stream are
 * shared; parallel PUTs would only split the same bandwidth). Small files go as one JSON body;
 * larger ones through presign-upload and an XHR PUT that reports progress. Each finished upload
 * refreshes its folder's listing.
 */
export function useUploads(sandboxId: string) {
  const queryClient = useQueryClient();
  const [uploads, setUploads] = useState<Upload[]>([]);
  const files = useRef(new Map<number, File>());
  const controllers = useRef(new Map<number, AbortController>());
  const running = useRef(false);
  const nextKey = useRef(1);

  const patch = useCallback(
    (key: number, change: Partial<Upload>) =>
      setUploads((all) => all.map((u) => (u.key === key ? { ...u, ...change } : u))),
    [],
  );

  const runOne = useCallback(
    async (u: Upload, file: File) => {
      const controller = new AbortController();
      controllers.current.set(u.key, controller);
      patch(u.key, { status: "uploading" });
      try {
        if (file.size <= JSON_UPLOAD_MAX_BYTES) {
          const bytes = new Uint8Array(await file.arrayBuffer());
          if (controller.signal.aborted) throw new DOMException("cancelled", "AbortError");
          await fileMutations.writeBytes(sandboxId, u.path, bytes);
        } else {
          const presigned = await fileMutations.presignUpload(sandboxId, u.path, file.size);
          await uploadWithProgress(presigned, file, (loaded) => patch(u.key, { loaded }), controller.signal);
        }
        patch(u.key, { status: "done", loaded: file.size });
      } catch (e) {
        if ((e as Error).name === "AbortError") patch(u.key, { status: "cancelled" });
        else patch(u.key, { status: "error", error: errorText(e) });
      } finally {
        controllers.current.delete(u.key);
        files.current.delete(u.key);
        void queryClient.invalidateQueries({
          queryKey: fileKeys.dir(sandboxId, u.path.slice(0, u.path.lastIndexOf("/")) || "/"),
        });
      }
    },
    [patch, queryClient, sandboxId],
  );

  // Drains the queue: whichever upload is next starts when the previous one ends.
  useEffect(() => {
    if (running.current) return;
    const next = uploads.find((u) => u.status === "queued");
    if (!next) return;
    const file = files.current.get(next.key);
    if (!file) return patch(next.key, { status: "error", error: "The file is no longer available; add it again." });
    running.current = true;
    void runOne(next, file).finally(() => {
      running.current = false;
      setUploads((all) => [...all]); // wake this effect for the next one
    });
  }, [uploads, runOne, patch]);

  const add = useCallback((dir: string, list: File[]) => {
    const added: Upload[] = list.map((file) => {
      const key = nextKey.current++;
      files.current.set(key, file);
      return { key, name: file.name, path: joinPath(dir, file.name), size: file.size, loaded: 0, status: "queued" };
    });
    setUploads((all) => [...all, ...added]);
  }, []);

  const cancel = useCallback(
    (key: number) => {
      const c = controllers.current.get(key);
      if (c) c.abort();
      else patch(key, { status: "cancelled" });
    },
    [patch],
  );

  const clearFinished = useCallback(
    () => setUploads((all) => all.filter((u) => u.status === "queued" || u.status === "uploading")),
    [],
  );

  // Leaving the tab cancels what is still in flight (nobody would see its result).
  useEffect(() => {
    const inFlight = controllers.current;
    return () => inFlight.forEach((c) => c.abort());
  }, []);

  return { uploads, add, cancel, clearFinished };
}

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../src/errors.js";
import { fsError, readLinkOf } from "../src/services/files.js";
import { createSandbox, exec, startEngine, type EngineHandle, enginePath } from "./helpers/engine.js";

/**
 * Files (/v1/sandboxes/:id/files and files/raw) against a real engine and real sandboxes. The data dir lives under
 * /var/tmp, not /tmp, so a symlink holding another sandbox's *host* path is outside the
 * sandbox's reachable mounts whatever it points at (under /tmp it would mean the sandbox's own /tmp).
 */
let e: EngineHandle;
let dataDir: string;
let id: string;
let other: string;

const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64");
const q = (p: string) => encodeURIComponent(p);
const read = (sbx: string, p: string, extra = "") => e.api("GET", `/sandboxes/${sbx}/files?path=${q(p)}${extra}`);
const write = (sbx: string, p: string, content: Buffer | string, extra: Record<string, unknown> = {}) =>
  e.api("POST", `/sandboxes/${sbx}/files`, { path: p, content: b64(content), ...extra });
const del = (sbx: string, p: string, extra = "") => e.api("DELETE", `/sandboxes/${sbx}/files?path=${q(p)}${extra}`);
/** Where the engine keeps a sandbox's workspace (a path inside the engine's mount namespace). */
const hostWorkspace = (sbx: string) => path.join(dataDir, "engine", "sbx", sbx, "workspace");
/** The same, readable from the test (which runs outside that namespace). */
const inEngine = (p: string) => enginePath(e, p);

beforeAll(async () => {
  dataDir = fs.mkdtempSync("/var/tmp/baton-files-test-");
  e = await startEngine({ dataDir });
  [id, other] = await Promise.all([createSandbox(e), createSandbox(e)]);
});
afterAll(async () => {
  await e?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("read and write", () => {
  it("round-trips binary bytes", async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const w = await write(id, "/workspace/bin/all.bytes", bytes);
    expect(w.status).toBe(201);
    expect(w.body).toEqual({ path: "/workspace/bin/all.bytes", size: 256 });
    const r = await read(id, "/workspace/bin/all.bytes");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ path: "/workspace/bin/all.bytes", type: "file", size: 256, encoding: "base64" });
    expect(Buffer.from(r.body.content, "base64").equals(bytes)).toBe(true);
    expect(Number.isNaN(Date.parse(r.body.modified_at))).toBe(false);
  });

  it("accepts utf8 content and overwrites in place", async () => {
    const p = "/tmp/notes/hello.txt";
    expect(
      (
        await e.api("POST", `/sandboxes/${id}/files`, {
          path: p,
          content: "a much longer first version",
          encoding: "utf8",
        })
      ).status,
    ).toBe(201);
    const w = await e.api("POST", `/sandboxes/${id}/files`, { path: p, content: "héllo", encoding: "utf8" });
    expect(w.body).toEqual({ path: p, size: 6 });
    expect((await exec(e, id, `cat ${p}`)).stdout).toBe("héllo");
  });

  it("lists a directory sorted by name, or as a bare array with list=true", async () => {
    await write(id, "/workspace/ls/b.txt", "bb");
    await write(id, "/workspace/ls/a.txt", "a");
    await write(id, "/workspace/ls/sub/c.txt", "ccc");
    await exec(e, id, "ln -s /workspace/ls/sub /workspace/ls/link");
    const r = await read(id, "/workspace/ls");
    expect(r.status).toBe(200);
    expect(r.body.path).toBe("/workspace/ls");
    expect(r.body.type).toBe("directory");
    const entries = r.body.entries as {
      name: string;
      path: string;
      is_dir: boolean;
      size: number;
      modified_at: string;
    }[];
    expect(entries.map((x) => x.name)).toEqual(["a.txt", "b.txt", "link", "sub"]);
    expect(entries[0]).toMatchObject({ name: "a.txt", path: "/workspace/ls/a.txt", is_dir: false, size: 1 });
    expect(entries.find((x) => x.name === "sub")!.is_dir).toBe(true);
    // A symlink is listed as itself, never followed.
    expect(entries.find((x) => x.name === "link")!.is_dir).toBe(false);
    const bare = await read(id, "/workspace/ls", "&list=true");
    expect(Array.isArray(bare.body)).toBe(true);
    expect(bare.body).toEqual(entries);
    const root = await read(id, "/workspace");
    expect(root.body.entries.map((x: { name: string }) => x.name)).toContain("ls");
  });

  it("is seen by exec, and reads what exec wrote", async () => {
    await write(id, "/workspace/from-api.txt", "written by the API\n");
    expect((await exec(e, id, "cat /workspace/from-api.txt")).stdout).toBe("written by the API\n");
    await exec(e, id, "printf 'made in the sandbox' > /workspace/from-exec.txt");
    const r = await read(id, "/workspace/from-exec.txt");
    expect(Buffer.from(r.body.content, "base64").toString()).toBe("made in the sandbox");
  });

  it("creates files and parents owned by the sandbox user, with the requested mode", async () => {
    await write(id, "/workspace/own/deep/f.txt", "x");
    await write(id, "/workspace/own/run.sh", "#!/bin/sh\necho ran\n", { mode: "0755" });
    const me = (await exec(e, id, "id -u")).stdout.trim();
    expect(me).toBe("1000");
    const st = await exec(
      e,
      id,
      "stat -c '%u %a' /workspace/own /workspace/own/deep /workspace/own/deep/f.txt /workspace/own/run.sh",
    );
    expect(st.stdout.trim().split("\n")).toEqual([`${me} 755`, `${me} 755`, `${me} 644`, `${me} 755`]);
    expect((await exec(e, id, "/workspace/own/run.sh")).stdout).toBe("ran\n");
    // The sandbox can change and delete what the engine wrote for it.
    expect(
      (await exec(e, id, "echo more >> /workspace/own/deep/f.txt && rm -r /workspace/own && echo ok")).stdout,
    ).toBe("ok\n");
  });

  it("refuses to write onto a directory, and invalid base64", async () => {
    await write(id, "/workspace/adir/x", "x");
    const r = await write(id, "/workspace/adir", "x");
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("is_a_directory");
    const bad = await e.api("POST", `/sandboxes/${id}/files`, { path: "/workspace/b64", content: "not base64!!" });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_error");
    const under = await write(id, "/workspace/from-api.txt/child", "x");
    expect(under.status).toBe(409);
    expect(under.body.code).toBe("not_a_directory");
  });

  it("404s a missing file", async () => {
    const r = await read(id, "/workspace/nope/missing.txt");
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("file_not_found");
  });

  it("refuses a JSON write over 10 MiB, and a JSON read of a file over 10 MiB", async () => {
    const big = await write(id, "/workspace/big.bin", Buffer.alloc(10 * 1024 * 1024 + 1));
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    expect((await read(id, "/workspace/big.bin")).status).toBe(404);
    await exec(e, id, "head -c 11000000 /dev/zero > /workspace/big.bin");
    const r = await read(id, "/workspace/big.bin");
    expect(r.status).toBe(413);
    expect(r.body.code).toBe("payload_too_large");
    expect(r.body.detail).toMatch(/presign-download|files\/raw/);
    // files/raw has no such cap.
    const raw = await fetch(`${e.url}/sandboxes/${id}/files/raw?path=${q("/workspace/big.bin")}`, {
      headers: { authorization: `Bearer ${e.token}` },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-length")).toBe("11000000");
    expect((await raw.arrayBuffer()).byteLength).toBe(11_000_000);
  });
});

describe("delete", () => {
  it("deletes a file, then 404s", async () => {
    await write(id, "/workspace/del/one.txt", "1");
    const d = await del(id, "/workspace/del/one.txt");
    expect(d.status).toBe(204);
    expect((await read(id, "/workspace/del/one.txt")).status).toBe(404);
    const again = await del(id, "/workspace/del/one.txt");
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("file_not_found");
  });

  it("needs recursive for a non-empty directory", async () => {
    await write(id, "/workspace/tree/a/b/c.txt", "c");
    await exec(e, id, "ln -s /workspace/from-api.txt /workspace/tree/a/link && mkfifo /workspace/tree/fifo");
    const d = await del(id, "/workspace/tree");
    expect(d.status).toBe(409);
    expect(d.body.code).toBe("directory_not_empty");
    expect((await del(id, "/workspace/tree", "&recursive=true")).status).toBe(204);
    expect((await read(id, "/workspace/tree")).status).toBe(404);
    // The symlink went, not what it pointed at.
    expect((await read(id, "/workspace/from-api.txt")).status).toBe(200);
    // Names that are not UTF-8 go too.
    await exec(e, id, "mkdir -p /workspace/tree2/d && touch \"/workspace/tree2/d/$(printf 'bad\\377name')\"");
    expect((await read(id, "/workspace/tree2/d")).body.entries).toHaveLength(1);
    expect((await del(id, "/workspace/tree2", "&recursive=true")).status).toBe(204);
    expect((await exec(e, id, "ls /workspace/tree2 2>&1; echo $?")).stdout).toMatch(/No such file/);
    await exec(e, id, "mkdir /workspace/empty");
    expect((await del(id, "/workspace/empty")).status).toBe(204);
  });

  it("never deletes /workspace or /tmp themselves", async () => {
    for (const p of ["/workspace", "/tmp", "/workspace/"]) {
      const d = await del(id, p, "&recursive=true");
      expect(d.status).toBe(400);
      expect(d.body.code).toBe("invalid_path");
    }
  });

  it("records file.write and file.delete events", async () => {
    await write(id, "/workspace/evt.txt", "12345");
    await del(id, "/workspace/evt.txt");
    const ev = await e.api("GET", `/sandboxes/${id}/events?type=file.write,file.delete&limit=500`);
    const mine = (ev.body as { type: string; data: { path: string; size: number } }[]).filter(
      (x) => x.data.path === "/workspace/evt.txt",
    );
    expect(mine.map((x) => x.type)).toEqual(["file.write", "file.delete"]);
    expect(mine[0]!.data.size).toBe(5);
  });
});

describe("paths", () => {
  it("refuses relative paths, .. segments, NUL bytes and paths outside /workspace and /tmp", async () => {
    for (const p of [
      "/workspace/../etc/passwd",
      "/etc/passwd",
      "workspace/x.txt",
      "/",
      "/usr/bin/python3",
      "/workspace/a\u0000b",
      `/workspace/${"x".repeat(300)}`,
    ]) {
      const r = await read(id, p);
      expect(r.status, p).toBe(400);
      expect(r.body.code, p).toBe("invalid_path");
      const w = await write(id, p, "x");
      expect(w.status, p).toBe(400);
      expect(w.body.code, p).toBe("invalid_path");
    }
    const r = await read(id, "/etc/passwd");
    expect(r.body.detail).toMatch(/\/workspace and \/tmp/);
  });

  it("refuses symlinks that lead out of the sandbox, reading and writing", async () => {
    const name = `baton_files_test_${randomBytes(4).toString("hex")}`;
    await exec(
      e,
      id,
      "ln -s /etc /workspace/etc_link && ln -s /etc/hostname /workspace/hostname_link && ln -s ../../../../../../../../etc /workspace/rel_etc && ln -s / /workspace/slash",
    );
    for (const p of [
      "/workspace/etc_link/hostname",
      "/workspace/hostname_link",
      "/workspace/rel_etc/hostname",
      "/workspace/slash/etc/hostname",
      "/workspace/etc_link",
    ]) {
      const r = await read(id, p);
      expect(r.status, p).toBe(400);
      expect(r.body.code, p).toBe("invalid_path");
    }
    for (const p of [
      `/workspace/etc_link/${name}`,
      `/workspace/rel_etc/${name}`,
      `/workspace/slash/etc/${name}`,
      `/workspace/etc_link/sub/${name}`,
    ]) {
      const w = await write(id, p, "pwned");
      expect(w.status, p).toBe(400);
      expect(w.body.code, p).toBe("invalid_path");
    }
    // Overwriting through a final symlink must not touch the host file either.
    const before = fs.readFileSync("/etc/hostname");
    expect((await write(id, "/workspace/hostname_link", "pwned")).status).toBe(400);
    expect(fs.readFileSync("/etc/hostname").equals(before)).toBe(true);
    expect(fs.existsSync(`/etc/${name}`)).toBe(false);
    expect(fs.existsSync(`/etc/sub`)).toBe(false);
    // Presigning and raw access are refused the same way.
    const ps = await e.api("POST", `/sandboxes/${id}/files/presign-download`, { path: "/etc/hostname" });
    expect(ps.status).toBe(400);
    const raw = await fetch(`${e.url}/sandboxes/${id}/files/raw?path=${q("/workspace/hostname_link")}`, {
      headers: { authorization: `Bearer ${e.token}` },
    });
    expect(raw.status).toBe(400);
    // Deleting through a symlinked parent is refused; deleting the link itself is fine.
    expect((await del(id, "/workspace/etc_link/hostname")).status).toBe(400);
    expect((await del(id, "/workspace/hostname_link")).status).toBe(204);
    expect(fs.existsSync("/etc/hostname")).toBe(true);
  });

  it("refuses symlinks into another sandbox's workspace", async () => {
    await write(other, "/workspace/secret.txt", "other sandbox's secret");
    const theirs = hostWorkspace(other);
    expect(fs.existsSync(inEngine(path.join(theirs, "secret.txt")))).toBe(true);
    await exec(e, id, `ln -s ${theirs} /workspace/other_abs && ln -s ../../${other}/workspace /workspace/other_rel`);
    for (const link of ["/workspace/other_abs", "/workspace/other_rel"]) {
      const r = await read(id, `${link}/secret.txt`);
      expect(r.status, link).toBe(400);
      expect(r.body.code, link).toBe("invalid_path");
      expect(r.text).not.toContain("other sandbox's secret");
      const w = await write(id, `${link}/planted.txt`, "x");
      expect(w.status, link).toBe(400);
      const d = await del(id, `${link}/secret.txt`);
      expect(d.status, link).toBe(400);
    }
    expect(fs.existsSync(inEngine(path.join(theirs, "planted.txt")))).toBe(false);
    expect(fs.readFileSync(inEngine(path.join(theirs, "secret.txt")), "utf8")).toBe("other sandbox's secret");
  });

  it("a parent the sandbox keeps re-creating past every retry is a 400, not a 500 (EEXIST from the walk)", () => {
    // The swap race below reaches this only under load (CI saw a 500 from it): the mapping itself.
    const raced = fsError(
      Object.assign(new Error("EEXIST: file already exists, mkdir"), { code: "EEXIST" }),
      "/workspace/race/d/x",
    );
    expect(raced).toBeInstanceOf(ApiError);
    expect(raced).toMatchObject({ status: 400, code: "invalid_path" });
  });

  it("a symlink the sandbox swaps for a directory between lstat and readlink is a 400, not a 500 (EINVAL)", () => {
    // The swap race below hit this under load in CI (a 500 from a write): the mapping itself.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-readlink-"));
    try {
      fs.symlinkSync("/etc", path.join(dir, "link"));
      expect(readLinkOf(path.join(dir, "link"), "/workspace/race/d/x")).toBe("/etc");
      const err = (() => {
        try {
          return readLinkOf(dir, "/workspace/race/d/x");
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 400, code: "invalid_path" });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("holds while the sandbox swaps a directory for escaping symlinks mid-request", async () => {
    const name = `baton_race_${randomBytes(4).toString("hex")}`;
    const theirs = hostWorkspace(other);
    const hostname = fs.readFileSync("/etc/hostname");
    await write(id, "/workspace/race/d/hostname", "safe");
    // Bounded: the swapping loop stops by itself after 3 s.
    const swapper = exec(
      e,
      id,
      `cd /workspace/race && timeout 3 sh -c 'while :; do mv d real; ln -s /etc d; rm d; ln -s ${theirs} d; rm d; mv real d 2>/dev/null || { rm -rf d; mv real d; }; done'; true`,
      { timeout_seconds: 20 },
    );
    const seen = new Map<number, number>();
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      const [w, r, l] = await Promise.all([
        write(id, `/workspace/race/d/${name}`, "x"),
        read(id, "/workspace/race/d/hostname"),
        read(id, "/workspace/race/d"),
      ]);
      for (const x of [w, r, l]) seen.set(x.status, (seen.get(x.status) ?? 0) + 1);
      expect([200, 201, 400, 404, 409]).toContain(w.status);
      if (r.status === 200) expect(Buffer.from(r.body.content, "base64").toString()).toBe("safe");
      else expect([400, 404, 409]).toContain(r.status);
      if (l.status === 200) expect(l.body.entries.map((x: { name: string }) => x.name)).not.toContain("passwd");
    }
    await swapper;
    expect(fs.existsSync(`/etc/${name}`)).toBe(false);
    expect(fs.existsSync(inEngine(path.join(theirs, name)))).toBe(false);
    expect(fs.readFileSync("/etc/hostname").equals(hostname)).toBe(true);
    // Both outcomes happened: the race was real.
    expect(seen.get(400) ?? 0).toBeGreaterThan(0);
    expect((seen.get(200) ?? 0) + (seen.get(201) ?? 0)).toBeGreaterThan(0);
  });

  it("follows symlinks that stay inside the sandbox, the way the sandbox sees them", async () => {
    await write(id, "/workspace/real/data.txt", "through the link");
    await exec(
      e,
      id,
      "ln -s /workspace/real /workspace/alias && ln -s real/data.txt /workspace/rel_alias && ln -s /tmp /workspace/tmp_link",
    );
    const r = await read(id, "/workspace/alias/data.txt");
    expect(r.status).toBe(200);
    expect(Buffer.from(r.body.content, "base64").toString()).toBe("through the link");
    expect(Buffer.from((await read(id, "/workspace/rel_alias")).body.content, "base64").toString()).toBe(
      "through the link",
    );
    expect((await write(id, "/workspace/tmp_link/via-link.txt", "in tmp")).status).toBe(201);
    expect((await exec(e, id, "cat /tmp/via-link.txt")).stdout).toBe("in tmp");
  });
});

describe("batch", () => {
  it("writes the good rows and reports the bad ones", async () => {
    const r = await e.api("POST", `/sandboxes/${id}/files/batch`, {
      files: [
        { path: "/workspace/batch/one.txt", content: b64("one") },
        { path: "/etc/evil", content: b64("x") },
        { path: "/workspace/batch/bad.txt", content: "%%%" },
        { path: "/workspace/batch/sub/two.txt", content: "two", encoding: "utf8" },
        { path: "relative.txt", content: b64("x") },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.written).toEqual([
      { path: "/workspace/batch/one.txt", size: 3 },
      { path: "/workspace/batch/sub/two.txt", size: 3 },
    ]);
    const errs = r.body.errors as { path: string; code: string; detail: string }[];
    expect(errs.map((x) => [x.path, x.code])).toEqual([
      ["/etc/evil", "invalid_path"],
      ["/workspace/batch/bad.txt", "validation_error"],
      ["relative.txt", "invalid_path"],
    ]);
    expect((await exec(e, id, "cat /workspace/batch/one.txt /workspace/batch/sub/two.txt")).stdout).toBe("onetwo");
  });

  it("refuses a batch over 25 MiB in total", async () => {
    const chunk = b64(Buffer.alloc(9 * 1024 * 1024));
    const r = await e.api("POST", `/sandboxes/${id}/files/batch`, {
      files: [0, 1, 2].map((i) => ({ path: `/workspace/huge${i}`, content: chunk })),
    });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe("payload_too_large");
    expect((await read(id, "/workspace/huge0")).status).toBe(404);
  });
});

describe("presigned URLs and raw bytes", () => {
  const presign = (kind: "upload" | "download", body: Record<string, unknown>, sbx = id) =>
    e.api("POST", `/sandboxes/${sbx}/files/presign-${kind}`, body);

  it("uploads with a presigned PUT and no token", async () => {
    const ps = await presign("upload", { path: "/workspace/up/data.bin" });
    expect(ps.status).toBe(200);
    expect(ps.body.method).toBe("PUT");
    expect(ps.body.headers).toEqual({ "Content-Type": "application/octet-stream" });
    expect(ps.body.url.startsWith(`${e.origin}/v1/sandboxes/${id}/files/raw?`)).toBe(true);
    expect(Date.parse(ps.body.expires_at) - Date.now()).toBeGreaterThan(290_000);
    const bytes = randomBytes(100_000);
    const put = await fetch(ps.body.url, { method: "PUT", headers: ps.body.headers, body: bytes });
    expect(put.status).toBe(201);
    expect(await put.json()).toEqual({ path: "/workspace/up/data.bin", size: 100_000 });
    const r = await read(id, "/workspace/up/data.bin");
    expect(Buffer.from(r.body.content, "base64").equals(bytes)).toBe(true);
    expect((await exec(e, id, "stat -c %u /workspace/up/data.bin")).stdout.trim()).toBe("1000");
  });

  it("takes any Content-Type as raw bytes with a Bearer token", async () => {
    const url = `${e.url}/sandboxes/${id}/files/raw?path=${q("/workspace/up/not.json")}`;
    const put = await fetch(url, {
      method: "PUT",
      headers: { authorization: `Bearer ${e.token}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(put.status).toBe(201);
    expect((await exec(e, id, "cat /workspace/up/not.json")).stdout).toBe("{not json");
    const empty = await fetch(`${e.url}/sandboxes/${id}/files/raw?path=${q("/workspace/up/empty")}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${e.token}` },
    });
    expect(empty.status).toBe(201);
    expect(await empty.json()).toEqual({ path: "/workspace/up/empty", size: 0 });
  });

  it("enforces max_bytes and keeps the old file when an upload is refused", async () => {
    await write(id, "/workspace/up/keep.txt", "original");
    const ps = await presign("upload", { path: "/workspace/up/keep.txt", max_bytes: 10 });
    const tooBig = await fetch(ps.body.url, { method: "PUT", headers: ps.body.headers, body: Buffer.alloc(11, 65) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { code: string }).code).toBe("payload_too_large");
    // A chunked body (no Content-Length) is cut off by counting instead.
    const chunked = await fetch(ps.body.url, {
      method: "PUT",
      headers: ps.body.headers,
      body: new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array(8));
          c.enqueue(new Uint8Array(8));
          c.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await exec(e, id, "cat /workspace/up/keep.txt; ls -A /workspace/up")).stdout).toBe(
      "original" + ["data.bin", "empty", "keep.txt", "not.json"].join("\n") + "\n",
    );
    // Raising max in the URL breaks the signature.
    const raised = ps.body.url.replace("max=10", "max=1000");
    expect((await fetch(raised, { method: "PUT", headers: ps.body.headers, body: Buffer.alloc(11) })).status).toBe(403);
    const ok = await fetch(ps.body.url, { method: "PUT", headers: ps.body.headers, body: "new" });
    expect(ok.status).toBe(201);
    expect((await exec(e, id, "cat /workspace/up/keep.txt")).stdout).toBe("new");
  });

  it("downloads with a presigned GET, with ranges", async () => {
    await write(id, "/workspace/dl.txt", "0123456789");
    const ps = await presign("download", { path: "/workspace/dl.txt", expires_in_seconds: 60 });
    expect(ps.status).toBe(200);
    expect(ps.body.method).toBe("GET");
    const full = await fetch(ps.body.url);
    expect(full.status).toBe(200);
    expect(full.headers.get("content-type")).toBe("application/octet-stream");
    expect(full.headers.get("content-length")).toBe("10");
    expect(await full.text()).toBe("0123456789");
    const part = await fetch(ps.body.url, { headers: { range: "bytes=2-5" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(await part.text()).toBe("2345");
    const open = await fetch(ps.body.url, { headers: { range: "bytes=7-" } });
    expect([open.status, await open.text()]).toEqual([206, "789"]);
    const suffix = await fetch(ps.body.url, { headers: { range: "bytes=-3" } });
    expect([suffix.status, await suffix.text()]).toEqual([206, "789"]);
    const bad = await fetch(ps.body.url, { headers: { range: "bytes=50-60" } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("content-range")).toBe("bytes */10");
    expect(((await bad.json()) as { code: string }).code).toBe("range_not_satisfiable");
    const head = await fetch(ps.body.url, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length")]).toEqual([200, "10"]);
  });

  it("rejects tampered, swapped and expired signatures", async () => {
    await write(id, "/workspace/sig.txt", "signed");
    await write(other, "/workspace/sig.txt", "other");
    const dl = (await presign("download", { path: "/workspace/sig.txt" })).body.url as string;
    const up = (await presign("upload", { path: "/workspace/sig.txt" })).body.url as string;
    const sig = new URL(dl).searchParams.get("sig")!;
    const flipped = dl.replace(`sig=${sig}`, `sig=${sig.slice(0, -1)}${sig.endsWith("0") ? "1" : "0"}`);
    const cases: [string, string, RequestInit?][] = [
      ["tampered sig", flipped],
      ["other path", dl.replace(q("/workspace/sig.txt"), q("/workspace/dl.txt"))],
      ["other sandbox", dl.replace(`/sandboxes/${id}/`, `/sandboxes/${other}/`)],
      ["later exp", dl.replace(/exp=(\d+)/, (_, n: string) => `exp=${Number(n) + 1000}`)],
      [
        "GET url used for PUT",
        dl,
        { method: "PUT", body: "x", headers: { "content-type": "application/octet-stream" } },
      ],
      ["PUT url used for GET", up],
    ];
    for (const [what, url, init] of cases) {
      const r = await fetch(url, init);
      expect(r.status, what).toBe(403);
      expect(((await r.json()) as { code: string }).code, what).toBe("invalid_signature");
    }
    expect((await exec(e, id, "cat /workspace/sig.txt")).stdout).toBe("signed");
    // No token and no signature at all is plain 401.
    expect((await fetch(`${e.url}/sandboxes/${id}/files/raw?path=${q("/workspace/sig.txt")}`)).status).toBe(401);

    const short = await presign("download", { path: "/workspace/sig.txt", expires_in_seconds: 1 });
    expect((await fetch(short.body.url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    const late = await fetch(short.body.url);
    expect(late.status).toBe(410);
    expect(((await late.json()) as { code: string }).code).toBe("url_expired");
  });

  it("validates presign requests", async () => {
    expect((await presign("upload", { path: "relative" })).status).toBe(400);
    expect((await presign("upload", { path: "/workspace/x", expires_in_seconds: 0 })).status).toBe(422);
    expect((await presign("download", { path: "/workspace/x", expires_in_seconds: 604_801 })).status).toBe(422);
  });
});

describe("sandbox state", () => {
  it("409s on a paused sandbox and 410s on a terminated one", async () => {
    const sbx = await createSandbox(e);
    await write(sbx, "/workspace/a.txt", "a");
    expect((await e.api("POST", `/sandboxes/${sbx}/pause`)).status).toBe(200);
    const paused = await read(sbx, "/workspace/a.txt");
    expect(paused.status).toBe(409);
    expect(paused.body.code).toBe("sandbox_paused");
    expect((await write(sbx, "/workspace/b.txt", "b")).body.code).toBe("sandbox_paused");
    expect((await e.api("POST", `/sandboxes/${sbx}/resume`)).status).toBe(200);
    expect((await read(sbx, "/workspace/a.txt")).status).toBe(200);
    expect((await e.api("DELETE", `/sandboxes/${sbx}`)).status).toBe(204);
    const gone = await read(sbx, "/workspace/a.txt");
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe("sandbox_terminated");
    expect((await e.api("GET", `/sandboxes/sbx_nope/files?path=/workspace`)).body.code).toBe("sandbox_not_found");
  });

  it("resumes an auto_resume sandbox for a file call", async () => {
    const sbx = await createSandbox(e, { auto_resume: true });
    await write(sbx, "/workspace/a.txt", "a");
    await e.api("POST", `/sandboxes/${sbx}/pause`);
    expect((await read(sbx, "/workspace/a.txt")).status).toBe(200);
    expect((await e.api("GET", `/sandboxes/${sbx}`)).body.status).toBe("running");
    await e.api("DELETE", `/sandboxes/${sbx}`);
  });
});

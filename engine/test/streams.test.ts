import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, exec, startEngine, type EngineHandle } from "./helpers/engine.js";

/** Streaming details that need an engine with short keepalives (engine-only). */
let e: EngineHandle;
beforeAll(async () => {
  e = await startEngine({ env: { ORKESTR_ENGINE_KEEPALIVE_MS: "200" } });
});
afterAll(async () => {
  await e?.stop();
});

async function readFor(res: Response, ms: number): Promise<string> {
  const reader = res.body!.getReader();
  let text = "";
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((r) => setTimeout(() => r(null), end - Date.now())),
    ]);
    if (!next || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  return text;
}

function stream(id: string, body: Record<string, unknown>, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${e.url}/sandboxes/${id}/exec/stream`, {
    method: "POST",
    headers: { authorization: `Bearer ${e.token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

async function waitForExit(id: string, marker: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const r = await exec(e, id, `ps -eo args= | grep -c '[${marker[0]}]${marker.slice(1)}' || true`);
    if (r.stdout.trim() === "0") return true;
    await new Promise((res) => setTimeout(res, 100));
  }
  return false;
}

describe("exec streams", () => {
  it("send keepalives while a command is quiet (SSE comments, NDJSON blank lines)", async () => {
    const id = await createSandbox(e);
    const sse = await readFor(await stream(id, { command: "sleep 1; echo done" }), 3000);
    expect(sse.match(/^: keepalive$/gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
    expect(sse).toContain('"is_final":true');
    const nd = await readFor(
      await stream(id, { command: "sleep 1; echo done" }, { accept: "application/x-ndjson" }),
      3000,
    );
    expect(nd).toMatch(/\n\n/);
    expect(
      nd
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .at(-1),
    ).toMatchObject({ is_final: true, exit_code: 0 });
  });

  it("kill_on_disconnect kills the command when the client goes; without it the command runs on", async () => {
    const id = await createSandbox(e);
    const ac = new AbortController();
    const res = await stream(id, { command: "echo go; exec sleep 101", kill_on_disconnect: true }, {}, ac.signal);
    await readFor(res, 300);
    ac.abort();
    expect(await waitForExit(id, "sleep 101", 5000)).toBe(true);

    const ac2 = new AbortController();
    const res2 = await stream(id, { command: "echo go; sleep 2; echo finished > /tmp/kept" }, {}, ac2.signal);
    await readFor(res2, 300);
    ac2.abort();
    await new Promise((r) => setTimeout(r, 2500));
    expect((await exec(e, id, "cat /tmp/kept")).stdout).toBe("finished\n");
    const ev = (await e.api("GET", `/sandboxes/${id}/events?type=exec.stream`)).body;
    expect(ev.at(-1).data).toMatchObject({ client_disconnected: true, exit_code: 0 });
  });

  it("a timeout kills everything the command started, even what left its process group", async () => {
    const id = await createSandbox(e);
    const r = await exec(e, id, "setsid sleep 103 & (trap '' HUP; nohup sleep 104 >/dev/null 2>&1 &); sleep 30", {
      timeout_seconds: 0.5,
    });
    expect(r).toMatchObject({ exit_code: 124, timed_out: true });
    expect(await waitForExit(id, "sleep 103", 3000)).toBe(true);
    expect(await waitForExit(id, "sleep 104", 3000)).toBe(true);
    // Processes of other execs are left alone.
    await exec(e, id, "nohup sleep 105 >/dev/null 2>&1 &");
    await exec(e, id, "sleep 5", { timeout_seconds: 0.3 });
    expect((await exec(e, id, "ps -eo args= | grep -c '[s]leep 105'")).stdout.trim()).toBe("1");
    expect((await e.api("GET", `/sandboxes/${id}`)).body.status).toBe("running");
  });

  it("a timeout inside a stream ends with exit 124 in the final frame", async () => {
    const id = await createSandbox(e);
    const text = await readFor(await stream(id, { command: "echo a; sleep 10", timeout_seconds: 0.5 }), 5000);
    expect(text).toMatch(/"is_final":true,"exit_code":124,"duration_ms":\d+,"timed_out":true/);
  });

  it("bytes that are not UTF-8 arrive base64-encoded", async () => {
    const id = await createSandbox(e);
    const text = await readFor(await stream(id, { command: "printf '\\377\\376ok'" }), 3000);
    const chunk = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)))
      .find((f) => f.stream === "stdout");
    expect(chunk.encoding).toBe("base64");
    expect(Buffer.from(chunk.data, "base64")).toEqual(Buffer.from([0xff, 0xfe, 0x6f, 0x6b]));
  });
});

describe("Idempotency-Key", () => {
  it("a retried create with the same key returns the same sandbox, not a second one", async () => {
    const key = `k-${Date.now()}`;
    const a = await e.api(
      "POST",
      "/sandboxes",
      { template: "python-3.12", metadata: { idem: key } },
      { headers: { "idempotency-key": key } },
    );
    const b = await e.api(
      "POST",
      "/sandboxes",
      { template: "python-3.12", metadata: { idem: key } },
      { headers: { "idempotency-key": key } },
    );
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    const listed = (await e.api("GET", `/sandboxes?metadata[idem]=${key}`)).body;
    expect(listed).toHaveLength(1);
    const other = await e.api(
      "POST",
      "/sandboxes",
      { template: "python-3.12" },
      { headers: { "idempotency-key": `${key}-2` } },
    );
    expect(other.body.id).not.toBe(a.body.id);
    // Another token does not see this token's keys.
    const t2 = await e.mint(["sandboxes:read", "sandboxes:write"]);
    const c = await e.api(
      "POST",
      "/sandboxes",
      { template: "python-3.12" },
      { token: t2, headers: { "idempotency-key": key } },
    );
    expect(c.body.id).not.toBe(a.body.id);
  });
});

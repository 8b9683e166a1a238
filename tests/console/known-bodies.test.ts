import "server-only";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askForKnownBody, bodilessResponse, knownText } from "../../lib/orkestr/known-body";
import { createNodeFetch } from "../../lib/server/node-fetch";
import { requestBody, withKnownBytes } from "../../lib/server/request-bytes";
import { readBodyBytes, readBodyText } from "../../lib/server/route";

// Bodies read whole before anyone asked, kept beside the Request or Response instead of inside a
// web stream (lib/orkestr/known-body.ts, lib/server/request-bytes.ts): the same text and limits as
// reading the stream, and only for a reader that said it reads them so.

describe("a response's known body", () => {
  it("decodes as Response.text() would: UTF-8, a leading BOM dropped", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":"ü"}')]);
    const response = bodilessResponse(bytes, { status: 200 });
    expect(knownText(response)).toBe('{"a":"ü"}');
    expect(await new Response(bytes).text()).toBe(knownText(response));
    expect(knownText(new Response("x"))).toBeUndefined();
  });

  describe("from the console's fetch", () => {
    let server: http.Server;
    let url: string;
    beforeAll(async () => {
      server = http.createServer((_req, res) =>
        res.writeHead(200, { "content-type": "application/json", "content-length": "3" }).end("[1]"),
      );
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    it("is a body like any fetch's unless the caller asked for the known body", async () => {
      const fetch = createNodeFetch();
      const plain = await fetch(url, {});
      expect(knownText(plain)).toBeUndefined();
      expect(await plain.text()).toBe("[1]");
      const asked = await fetch(url, askForKnownBody({}));
      expect(knownText(asked)).toBe("[1]");
      expect(asked.body).toBeNull();
      expect(asked.headers.get("content-type")).toBe("application/json");
    });
  });
});

describe("a request's known body", () => {
  const bodiless = () =>
    new Request("http://baton.test/api/v1/x", { method: "POST", headers: { "content-type": "application/json" } });

  it("is what route()'s reader reads, with the route's limit still enforced (413)", async () => {
    const bytes = new TextEncoder().encode('{"command":"true"}');
    expect(await readBodyText(withKnownBytes(bodiless(), bytes), 1024)).toBe('{"command":"true"}');
    await expect(readBodyBytes(withKnownBytes(bodiless(), new Uint8Array(10)), 5)).rejects.toMatchObject({
      code: "payload_too_large",
    });
  });

  it("is the body passed on (requestBody), and a request without one passes its own stream", async () => {
    const bytes = new TextEncoder().encode("abc");
    expect(requestBody(withKnownBytes(bodiless(), bytes))).toBe(bytes);
    const streamed = new Request("http://baton.test/x", { method: "POST", body: "xyz" });
    expect(requestBody(streamed)).toBe(streamed.body);
    expect(requestBody(new Request("http://baton.test/x"))).toBeNull();
  });
});

import "server-only";
import { describe, expect, it } from "vitest";
import { knownText, withKnownBody } from "../../lib/orkestr/known-body";
import { withKnownBytes } from "../../lib/server/request-bytes";
import { readBodyBytes, readBodyText } from "../../lib/server/route";

// Bodies read whole before anyone asked (lib/orkestr/known-body.ts, lib/server/request-bytes.ts):
// the same text and limits as reading the stream, and never once the body was read.

describe("a response's remembered body", () => {
  it("decodes as Response.text() would: UTF-8, a leading BOM dropped", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":"ü"}')]);
    const response = withKnownBody(new Response(bytes), bytes);
    expect(knownText(response)).toBe('{"a":"ü"}');
    expect(await new Response(bytes).text()).toBe(knownText(response));
  });

  it("is forgotten once the body was read, and absent on a response that has none remembered", async () => {
    const bytes = new TextEncoder().encode("[1]");
    const response = withKnownBody(new Response(bytes), bytes);
    expect(await response.text()).toBe("[1]");
    expect(knownText(response)).toBeUndefined();
    expect(knownText(new Response("x"))).toBeUndefined();
  });
});

describe("a request's remembered body in route()'s reader", () => {
  const request = (body: string) =>
    new Request("http://baton.test/api/v1/x", {
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
    });

  it("is read as it is, with the route's limit still enforced (413)", async () => {
    const bytes = new TextEncoder().encode('{"command":"true"}');
    expect(await readBodyText(withKnownBytes(request('{"command":"true"}'), bytes), 1024)).toBe('{"command":"true"}');
    await expect(readBodyBytes(withKnownBytes(request("0123456789"), new Uint8Array(10)), 5)).rejects.toMatchObject({
      code: "payload_too_large",
    });
  });

  it("a request whose body was already read gives what its stream gives (empty), not the remembered bytes", async () => {
    const req = withKnownBytes(request("abc"), new TextEncoder().encode("abc"));
    expect(await req.text()).toBe("abc");
    await expect(readBodyText(req, 1024)).rejects.toThrow();
  });
});

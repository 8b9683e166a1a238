import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { apiUrl, curlRequest, jsOptions, pyKwargs } from "../../lib/code/snippet";

describe("action snippets", () => {
  it("curl: a body with quotes and $ reaches the server byte for byte (the shell expands nothing)", () => {
    const body = { name: "it's $HOME `x`", size: 2 };
    const cmd = curlRequest({ method: "POST", url: apiUrl("http://127.0.0.1:8787/v1", "/v1/volumes"), body });
    expect(cmd).toContain('curl -X POST "http://127.0.0.1:8787/v1/volumes"');
    // Run the snippet's --data argument through a real shell and compare what curl would send.
    const data = cmd.slice(cmd.indexOf("--data ") + "--data ".length).trim();
    const echoed = execFileSync("bash", ["-c", `printf %s ${data}`], { encoding: "utf8" });
    expect(JSON.parse(echoed)).toEqual(body);
  });

  it("curl: a GET has no method flag and no body headers; idempotent creates carry a key", () => {
    expect(curlRequest({ method: "GET", url: "https://api.orkestr.eu/v1/snapshots" })).toBe(
      'curl "https://api.orkestr.eu/v1/snapshots" \\\n  -H "Authorization: Bearer $ORKESTR_API_KEY"\n',
    );
    expect(curlRequest({ method: "POST", url: "u", body: {}, idempotent: true })).toContain("Idempotency-Key");
  });

  it("SDK arguments leave out what is unset and use each language's spelling", () => {
    expect(pyKwargs({ name: "a", size_gb: 2, region: undefined, ok: true })).toBe('name="a", size_gb=2, ok=True');
    expect(jsOptions({ size_gb: 2, lifetime: null })).toBe("{ sizeGb: 2 }");
    expect(jsOptions({})).toBe("{}");
  });
});

import { describe, expect, it } from "vitest";
import { parseListeningPorts, parsePort, withPreviewToken } from "./previews";

// Real output of SCAN_COMMAND in a `restricted` engine sandbox running `python3 -m http.server 8000`.
const SCAN = `proxy http://127.0.0.1:3128 http://127.0.0.1:3128
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 570505 1 000000009ee0c43c 100 0 0 10 0
   1: 0100007F:0C38 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 570468 1 00000000a3533aef 100 0 0 10 0
   2: 0100007F:1F40 0100007F:A2B4 01 00000000:00000000 00:00000000 00000000  1000        0 570600 1 0000000000000000 20 4 30 10 -1
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:0BB8 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0
   1: 00000000000000000000000000000000:1538 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0
`;

describe("parseListeningPorts", () => {
  it("lists LISTEN sockets of both tables, without the egress proxy and established connections", () => {
    expect(parseListeningPorts(SCAN)).toEqual([
      { port: 3000, loopbackOnly: true },
      { port: 5432, loopbackOnly: false },
      { port: 8000, loopbackOnly: false },
    ]);
  });

  it("keeps the proxy's port when no proxy is set (network open without one, or another provider)", () => {
    expect(parseListeningPorts(SCAN.replace(/^proxy .*$/m, "proxy  ")).map((p) => p.port)).toEqual([
      3000, 3128, 5432, 8000,
    ]);
  });

  it("returns nothing for empty or unrelated output", () => {
    expect(parseListeningPorts("")).toEqual([]);
    expect(parseListeningPorts("cat: /proc/net/tcp: No such file or directory")).toEqual([]);
  });
});

describe("parsePort", () => {
  it("accepts 1–65535 only", () => {
    expect(parsePort(" 8000 ")).toBe(8000);
    expect(parsePort("0")).toBeNull();
    expect(parsePort("65536")).toBeNull();
    expect(parsePort("80a")).toBeNull();
    expect(parsePort("-1")).toBeNull();
  });
});

describe("withPreviewToken", () => {
  it("adds orkestr_token to the URL, keeping its path and query", () => {
    expect(withPreviewToken("http://8000-sbx_a.sbx.localhost:1234/x?y=1", "pvt_a+b")).toBe(
      "http://8000-sbx_a.sbx.localhost:1234/x?y=1&orkestr_token=pvt_a%2Bb",
    );
    expect(withPreviewToken("https://3000-sbx_a.sbx.orkestr.run", null)).toBe("https://3000-sbx_a.sbx.orkestr.run");
  });
});

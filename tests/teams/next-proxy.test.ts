import { describe, expect, it, vi } from "vitest";
import { NextRequest } from "next/server";
import { PAGE_TEAM_HEADER, proxy } from "../../proxy";
import { REQUEST_PATH_HEADER } from "../../lib/security-headers";

// proxy.ts passes server components what they may trust: its own nonce, path and the page URL's
// team. A client that sends those headers itself is ignored, and only a page's `?team=` counts.

vi.stubEnv("BATON_URL", "http://localhost:3000");

/** The request headers NextResponse.next() hands on (Next encodes them as x-middleware-request-*). */
function passedOn(res: Response): Record<string, string | null> {
  const get = (name: string) => res.headers.get(`x-middleware-request-${name}`);
  return { pageTeam: get(PAGE_TEAM_HEADER), path: get(REQUEST_PATH_HEADER), nonce: get("x-nonce") };
}

function call(url: string, headers: Record<string, string> = {}) {
  return proxy(new NextRequest(`http://localhost:3000${url}`, { headers: { host: "localhost:3000", ...headers } }));
}

describe("proxy.ts and the team", () => {
  it("passes the page URL's team on, and remembers it as the default", () => {
    const res = call("/sandboxes?team=acme");
    expect(passedOn(res).pageTeam).toBe("acme");
    expect(res.headers.get("set-cookie")).toMatch(/baton_last_team=acme;.*HttpOnly/i);
  });

  it("drops internal headers a client sent: a forged page team, path or nonce never reaches a page", () => {
    const forged = { [PAGE_TEAM_HEADER]: "victim", [REQUEST_PATH_HEADER]: "/evil", "x-nonce": "n0nce" };
    const noTeam = passedOn(call("/sandboxes", forged));
    expect(noTeam.pageTeam).toBeNull();
    expect(noTeam.path).toBe("/sandboxes");
    expect(noTeam.nonce).not.toBe("n0nce");
    const withTeam = passedOn(call("/sandboxes?team=mine", forged));
    expect(withTeam.pageTeam).toBe("mine");
  });

  it("sets no page team for API requests (they name their team with X-Baton-Team, checked by route())", () => {
    const res = call("/api/v1/sandboxes?team=acme", { "x-baton-team": "acme" });
    expect(passedOn(res).pageTeam).toBeNull();
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("does not remember a malformed team, nor rewrite a cookie that already says it", () => {
    expect(call("/sandboxes?team=Not%20a%20slug").headers.get("set-cookie")).toBeNull();
    expect(passedOn(call("/sandboxes?team=Not%20a%20slug")).pageTeam).toBe("Not a slug");
    expect(call("/sandboxes?team=acme", { cookie: "baton_last_team=acme" }).headers.get("set-cookie")).toBeNull();
  });
});

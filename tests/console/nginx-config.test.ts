import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NGINX_BIN, renderNginxConfig } from "../../scripts/multi-instance/topology";

// The balancer's config (scripts/multi-instance/nginx.conf.template) as the launcher renders it:
// nginx itself must accept it, and it must pass on what Baton's checks read.

const prefix = fs.mkdtempSync(path.join(os.tmpdir(), "baton-nginx-conf-"));
afterAll(() => fs.rmSync(prefix, { recursive: true, force: true }));

const render = () =>
  renderNginxConfig({
    prefix,
    listen: "127.0.0.1:18080",
    upstreams: ["127.0.0.1:18081", "127.0.0.1:18082"],
    proxyBind: "127.0.0.2",
    user: process.getuid?.() === 0 ? "nobody nogroup" : undefined,
  });

describe("the nginx config for several instances", () => {
  it("fills every placeholder, one upstream server per instance", () => {
    const conf = render();
    expect(conf).not.toMatch(/\{\{|\}\}/);
    expect(conf.match(/^\s*server 127\.0\.0\.1:\d+ /gm)).toHaveLength(2);
    // What Baton's Host/Origin checks, client address and the terminal relay depend on.
    expect(conf).toMatch(/proxy_set_header Host \$http_host;/);
    expect(conf).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(conf).toMatch(/proxy_http_version 1\.1;/);
    expect(conf).toMatch(/proxy_bind 127\.0\.0\.2;/);
  });

  it.skipIf(!fs.existsSync(NGINX_BIN))("nginx -t accepts it", () => {
    const file = path.join(prefix, "nginx.conf");
    fs.writeFileSync(file, render());
    const res = spawnSync(NGINX_BIN, ["-t", "-p", prefix, "-c", file, "-e", path.join(prefix, "error.log")], {
      encoding: "utf8",
    });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/syntax is ok/);
  });
});

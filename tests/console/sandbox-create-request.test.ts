import { describe, expect, it } from "vitest";
import {
  buildCreateRequest,
  initialFormState,
  newRow,
  normalizeDomain,
  sizeRefusal,
  volumeRefusal,
  type CreateFormState,
} from "../../components/sandboxes/create/create-request";
import { curlCode, javascriptCode, pythonCode } from "../../components/sandboxes/create/request-code";
import type { Limits } from "../../lib/orkestr/schemas/limits";

const limits: Limits = {
  plan: "free",
  allowed_sizes: ["small"],
  sizes: [
    { size: "small", cpu: 1, memory_mb: 1024, allowed: true },
    { size: "medium", cpu: 2, memory_mb: 4096, allowed: false },
  ],
  regions: ["fsn1", "hel1"],
  default_egress_domains: ["pypi.org", "github.com"],
  max_timeout_seconds: 1800,
  network_open_allowed: false,
  previews_allowed: true,
};

const form = (patch: Partial<CreateFormState> = {}): CreateFormState => ({ ...initialFormState(limits), ...patch });
const ctx = { limits, volumes: [] };

describe("buildCreateRequest", () => {
  it("sends only what differs from the server's defaults", () => {
    const { body, errors } = buildCreateRequest(form(), ctx);
    expect(errors).toEqual({});
    expect(body).toEqual({ template: "python-3.12" });
  });

  it("builds every option", () => {
    const { body, errors } = buildCreateRequest(
      form({
        size: "small",
        region: "hel1",
        network: "restricted",
        allowDomains: ["pypi.org", "api.internal.example.com"],
        timeoutSeconds: "600",
        onTimeout: "pause",
        autoResume: true,
        env: [newRow("OPENAI_API_KEY", "sk-secret")],
        metadata: [newRow("agent_run", "r_1")],
        volumeChoice: "new",
        newVolumeName: "cache",
        previewAuth: true,
      }),
      ctx,
    );
    expect(errors).toEqual({});
    expect(body).toEqual({
      template: "python-3.12",
      size: "small",
      region: "hel1",
      network: "restricted",
      allow_domains: ["pypi.org", "api.internal.example.com"],
      timeout_seconds: 600,
      on_timeout: "pause",
      auto_resume: true,
      env: { OPENAI_API_KEY: "sk-secret" },
      metadata: { agent_run: "r_1" },
      volume: "cache",
      preview_auth: true,
    });
  });

  it("leaves allow_domains out while it equals the defaults (the server's default set)", () => {
    const { body } = buildCreateRequest(form({ network: "restricted" }), ctx);
    expect(body).toEqual({ template: "python-3.12", network: "restricted" });
  });

  it("puts each mistake on its field", () => {
    const env = newRow("1BAD", "x");
    const dup1 = newRow("k", "1");
    const dup2 = newRow("k", "2");
    const { body, errors } = buildCreateRequest(
      form({
        template: "",
        size: "medium",
        network: "open",
        timeoutSeconds: "5000",
        env: [env],
        metadata: [dup1, dup2],
        previewAuth: true,
      }),
      ctx,
    );
    expect(body).toBeNull();
    expect(errors.template).toMatch(/Choose a template/);
    expect(errors.size).toMatch(/free plan/);
    expect(errors.network).toMatch(/payment/);
    expect(errors.timeout_seconds).toBe("At most 1800 seconds on the free plan.");
    expect(errors[`env.${env.rowId}`]).toMatch(/letters, digits/);
    expect(errors[`metadata.${dup2.rowId}`]).toMatch(/already set/);
    expect(errors[`metadata.${dup1.rowId}`]).toBeUndefined();
    expect(errors.preview_auth).toBeUndefined(); // network open: previews are possible
  });

  it("refuses Baton's own baton.* metadata keys next to the row, as the API would (422 reserved_metadata)", () => {
    const stamp = newRow("baton.user", "usr_someone");
    const ok = newRow("team", "a");
    const { body, errors } = buildCreateRequest(form({ metadata: [stamp, ok] }), ctx);
    expect(body).toBeNull();
    expect(errors[`metadata.${stamp.rowId}`]).toMatch(/Baton's own/);
    expect(errors[`metadata.${ok.rowId}`]).toBeUndefined();
  });

  it("refuses preview_auth without a network, timeouts under 10 and empty allowlists", () => {
    const { errors } = buildCreateRequest(form({ previewAuth: true, timeoutSeconds: "9" }), ctx);
    expect(errors.preview_auth).toMatch(/need a network/);
    expect(errors.timeout_seconds).toMatch(/At least 10/);
    expect(buildCreateRequest(form({ network: "restricted", allowDomains: [] }), ctx).errors.allow_domains).toMatch(
      /at least one/,
    );
    expect(buildCreateRequest(form({ timeoutSeconds: "1.5" }), ctx).errors.timeout_seconds).toMatch(/whole number/);
  });

  it("keeps the valid parts in the draft while others are wrong", () => {
    const { body, draft } = buildCreateRequest(form({ timeoutSeconds: "x", metadata: [newRow("a", "b")] }), ctx);
    expect(body).toBeNull();
    expect(draft).toEqual({ template: "python-3.12", metadata: { a: "b" } });
  });

  it("disables volumes in use and forks without a template", () => {
    const vol = { id: "vol_1", name: "data", attached_sandbox_id: "sbx_x", status: "attached" };
    expect(volumeRefusal(vol)).toBe("In use by sbx_x.");
    const { errors } = buildCreateRequest(form({ volumeChoice: "existing", volume: "vol_1" }), {
      limits,
      volumes: [vol],
    });
    expect(errors.volume).toBe("In use by sbx_x.");
    const fork = buildCreateRequest(form({ source: "snapshot", snapshot: "snap_1", region: "hel1" }), ctx);
    expect(fork.body).toEqual({ snapshot: "snap_1" });
  });

  it("explains disallowed sizes and reads domains tolerantly", () => {
    expect(sizeRefusal(limits, "medium")).toBe("Not available on the free plan (it allows small).");
    expect(sizeRefusal(limits, "small")).toBeNull();
    expect(normalizeDomain(" HTTPS://Api.Example.com/path ")).toBe("api.example.com");
    expect(normalizeDomain("*.example.com")).toBe("*.example.com");
    expect(normalizeDomain("not a domain")).toBeNull();
  });
});

describe("request code", () => {
  const body = {
    template: "python-3.12",
    network: "restricted" as const,
    allow_domains: ["pypi.org"],
    timeout_seconds: 600,
    auto_resume: true,
    env: { OPENAI_API_KEY: "sk-secret-value" },
    metadata: { run: "it's $HOME" },
  };

  it("never contains env values or a token, in any language", () => {
    for (const code of [pythonCode(body), javascriptCode(body), curlCode(body)]) {
      expect(code).not.toContain("sk-secret-value");
      expect(code).not.toMatch(/ork_[A-Za-z0-9]/);
      expect(code).toContain("ORKESTR_API_KEY");
    }
  });

  it("writes SDK calls with the SDK's names", () => {
    const py = pythonCode(body);
    expect(py).toContain("import os\nfrom orkestr import Sandbox");
    expect(py).toContain('    allow_domains=["pypi.org"],');
    expect(py).toContain("    auto_resume=True,");
    expect(py).toContain('    env={"OPENAI_API_KEY": os.environ["OPENAI_API_KEY"]},');
    const js = javascriptCode(body);
    expect(js).toContain('  allowDomains: ["pypi.org"],');
    expect(js).toContain("  timeoutSeconds: 600,");
    expect(js).toContain('  env: { "OPENAI_API_KEY": process.env["OPENAI_API_KEY"] },');
  });

  it("writes curl that a shell runs as intended", () => {
    const withEnv = curlCode(body, "http://127.0.0.1:8787");
    expect(withEnv).toContain('curl -X POST "http://127.0.0.1:8787/v1/sandboxes"');
    expect(withEnv).toContain('"OPENAI_API_KEY": "${OPENAI_API_KEY}"');
    expect(withEnv).toContain('"run": "it\'s \\$HOME"'); // escaped inside the unquoted heredoc
    const plain = curlCode({ template: "python-3.12", metadata: { q: "it's" } });
    expect(plain).toContain("--data '{");
    expect(plain).toContain(`"q": "it'\\''s"`);
  });
});

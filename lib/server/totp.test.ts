import "server-only";
import { describe, expect, it } from "vitest";
import { generate } from "otplib";
import { matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, totpQrDataUrl, totpUri } from "./totp";

describe("totp", () => {
  const secret = newTotpSecret();
  const t = 1_800_000_015; // 15 s into a step
  const at = (offsetSteps: number) => generate({ secret, epoch: t + offsetSteps * 30 });
  const step = Math.floor(t / 30);

  it("accepts a code one step either side of now, and no further", async () => {
    expect(await matchTotp(secret, await at(0), { epochSeconds: t })).toBe(step);
    expect(await matchTotp(secret, await at(-1), { epochSeconds: t })).toBe(step - 1);
    expect(await matchTotp(secret, await at(1), { epochSeconds: t })).toBe(step + 1);
    for (const far of [-3, 3]) expect(await matchTotp(secret, await at(far), { epochSeconds: t })).toBeNull();
  });

  it("refuses a step that is not newer than the last one used (replay)", async () => {
    const code = await at(0);
    expect(await matchTotp(secret, code, { epochSeconds: t, afterStep: step })).toBeNull();
    expect(await matchTotp(secret, code, { epochSeconds: t, afterStep: step - 1 })).toBe(step);
    expect(await matchTotp(secret, await at(1), { epochSeconds: t, afterStep: step })).toBe(step + 1);
  });

  it("refuses malformed codes without throwing", async () => {
    for (const bad of ["", "12345", "1234567", "abcdef", "12 34 5x"]) expect(await matchTotp(secret, bad)).toBeNull();
    expect(
      await matchTotp(secret, ` ${(await at(0)).slice(0, 3)} ${(await at(0)).slice(3)} `, { epochSeconds: t }),
    ).toBe(step);
  });

  it("makes an otpauth URI and a QR code of it as an SVG data URL", async () => {
    const uri = totpUri(secret, "ada@example.com");
    expect(uri).toBe(`otpauth://totp/Baton:ada%40example.com?secret=${secret}&issuer=Baton`);
    const url = await totpQrDataUrl(uri);
    expect(Buffer.from(url.replace(/^data:image\/svg\+xml;base64,/, ""), "base64").toString()).toMatch(/^<svg/);
  });

  it("recovery codes: ten distinct, typed in any case with or without dashes", () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-hjkmnp-z2-9]{4}-[a-hjkmnp-z2-9]{4}-[a-hjkmnp-z2-9]{4}$/);
    const c = codes[0]!;
    expect(normalizeRecoveryCode(c.toUpperCase().replace(/-/g, " "))).toBe(c.replace(/-/g, ""));
    expect(normalizeRecoveryCode("short")).toBeNull();
  });
});

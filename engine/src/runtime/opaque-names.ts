import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * Names on the host that every local user can list (cgroupfs under /sys/fs/cgroup) must not be
 * sandbox ids: a public preview needs nothing but its sandbox's id, so an id is as good as a link.
 * These names are the id encrypted deterministically (a synthetic IV, as AES-SIV does it): the
 * same id always gets the same name, so a restarted engine finds its sandboxes' groups again, and
 * the engine (only it holds the key) reads the id back when it reconciles what it finds there.
 *
 *   name = "s" + hex(iv ‖ AES-256-CTR(encKey, iv ‖ 0…, id)),   iv = HMAC-SHA256(macKey, id)[0..8)
 *
 * The key is 64 random bytes in the engine's root (0600), made once and kept across restarts.
 */
const KEY_FILE = "host-names.key";
const IV_BYTES = 8;

export class OpaqueNames {
  private readonly macKey: Buffer;
  private readonly encKey: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 64) throw new Error("an opaque-names key is 64 bytes");
    this.macKey = key.subarray(0, 32);
    this.encKey = key.subarray(32);
  }

  /** The key of the engine whose root is `root`, made on first use. */
  static forRoot(root: string): OpaqueNames {
    const file = path.join(root, KEY_FILE);
    let key: Buffer;
    try {
      key = fs.readFileSync(file);
    } catch {
      fs.mkdirSync(root, { recursive: true, mode: 0o700 });
      try {
        fs.writeFileSync(file, randomBytes(64), { mode: 0o600, flag: "wx" });
      } catch (e) {
        // Another engine process of this root made it first: use theirs.
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      key = fs.readFileSync(file);
    }
    return new OpaqueNames(key);
  }

  encode(id: string): string {
    const plain = Buffer.from(id, "utf8");
    const iv = createHmac("sha256", this.macKey).update(plain).digest().subarray(0, IV_BYTES);
    const c = createCipheriv("aes-256-ctr", this.encKey, counterBlock(iv));
    return `s${Buffer.concat([iv, c.update(plain), c.final()]).toString("hex")}`;
  }

  /** The id a name stands for, or null when it is not one of this key's names. */
  decode(name: string): string | null {
    if (!/^s(?:[0-9a-f]{2})+$/.test(name) || name.length <= 1 + 2 * IV_BYTES) return null;
    const raw = Buffer.from(name.slice(1), "hex");
    const iv = raw.subarray(0, IV_BYTES);
    const d = createDecipheriv("aes-256-ctr", this.encKey, counterBlock(iv));
    const plain = Buffer.concat([d.update(raw.subarray(IV_BYTES)), d.final()]);
    const check = createHmac("sha256", this.macKey).update(plain).digest().subarray(0, IV_BYTES);
    return timingSafeEqual(check, iv) ? plain.toString("utf8") : null;
  }
}

/** CTR's 16-byte initial counter block: the synthetic IV, then zeros. */
function counterBlock(iv: Buffer): Buffer {
  return Buffer.concat([iv, Buffer.alloc(16 - iv.length)]);
}

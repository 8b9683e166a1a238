import fs from "node:fs";
import path from "node:path";

/** The first executable `bin` on PATH, or in the usual system directories; null when there is none. */
export function which(bin: string): string | null {
  for (const dir of (process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin")
    .split(":")
    .concat(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])) {
    const p = path.join(dir, bin);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* keep looking */
    }
  }
  return null;
}

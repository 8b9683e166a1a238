import { execFileSync } from "node:child_process";
import path from "node:path";

/**
 * A throwaway self-signed certificate (RSA 2048, one day) for `names` (the first is the CN; all are
 * subjectAltNames), written as key.pem and cert.pem into `dir`. Needs openssl on PATH.
 */
export function selfSignedCert(dir: string, names: string[]): { key: string; cert: string } {
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=${names[0]}`,
      "-addext",
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`,
      "-keyout",
      key,
      "-out",
      cert,
    ],
    { stdio: "ignore", timeout: 20_000 },
  );
  return { key, cert };
}

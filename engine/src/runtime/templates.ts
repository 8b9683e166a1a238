import fs from "node:fs";
import { execFileSync } from "node:child_process";

/**
 * Built-in base images, mapped onto what this machine really has. The engine does not pretend:
 * `GET /v1/base-images` reports each mapping (`maps_to`) and any gap against the hosted image.
 */
export interface RuntimeBind {
  /** Host path of the runtime (bind-mounted once into the engine's private mount namespace). */
  src: string;
  /** Where the sandbox sees it (same path as on the host, since interpreters embed absolute RUNPATHs). */
  dest: string;
}

export interface BaseImage {
  id: string;
  description: string;
  maps_to: string;
  available: boolean;
  /** Where it falls short of the hosted image, said plainly. */
  gaps: string[];
  binds: RuntimeBind[];
  path: string;
  env: Record<string, string>;
}

export const BASE_IMAGE_IDS = ["python-3.12", "python-3.12-bare", "code-interpreter", "node-22", "debian-12"] as const;
export const TEMPLATE_ALIASES: Record<string, string> = { "ubuntu-24.04": "debian-12" };

const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

function versionOf(bin: string, args: string[]): string | null {
  try {
    return execFileSync(bin, args, { encoding: "utf8", timeout: 5000, stdio: ["ignore", "pipe", "pipe"] }).trim();
  } catch {
    return null;
  }
}

/** Finds a CPython 3.12 build on the host: pyenv first (the usual place here), then the system. */
function findPython312(): { prefix: string; version: string } | null {
  const roots = [process.env.PYENV_ROOT, "/root/.pyenv", "/opt/pyenv"].filter((r): r is string => !!r);
  for (const root of roots) {
    const versions = `${root}/versions`;
    if (!fs.existsSync(versions)) continue;
    const match = fs
      .readdirSync(versions)
      .filter((v) => /^3\.12\.\d+$/.test(v))
      .sort()
      .pop();
    if (match && fs.existsSync(`${versions}/${match}/bin/python3.12`))
      return { prefix: `${versions}/${match}`, version: match };
  }
  for (const bin of ["/usr/bin/python3.12", "/usr/local/bin/python3.12"]) {
    const v = fs.existsSync(bin) ? versionOf(bin, ["-c", "import sys;print(sys.version.split()[0])"]) : null;
    if (v) return { prefix: "", version: v };
  }
  return null;
}

export function detectBaseImages(): Map<string, BaseImage> {
  const images = new Map<string, BaseImage>();
  const debian = fs.existsSync("/etc/debian_version")
    ? fs.readFileSync("/etc/debian_version", "utf8").trim()
    : "unknown";
  const sysPy = versionOf("/usr/bin/python3", ["-c", "import sys;print(sys.version.split()[0])"]);
  const node = versionOf("/usr/bin/node", ["--version"]) ?? versionOf("node", ["--version"]);
  const py = findPython312();

  const pyImage = (id: string, description: string, extraGaps: string[]): BaseImage => {
    if (py && py.prefix) {
      return {
        id,
        description,
        available: true,
        maps_to: `CPython ${py.version} from ${py.prefix} (read-only), host Debian ${debian} userland`,
        gaps: extraGaps,
        binds: [{ src: py.prefix, dest: py.prefix }],
        path: `${py.prefix}/bin:${SYSTEM_PATH}`,
        env: { PYTHONUNBUFFERED: "1" },
      };
    }
    if (py) {
      return {
        id,
        description,
        available: true,
        maps_to: `system CPython ${py.version}, host Debian ${debian} userland`,
        gaps: extraGaps,
        binds: [],
        path: SYSTEM_PATH,
        env: { PYTHONUNBUFFERED: "1" },
      };
    }
    return {
      id,
      description,
      available: !!sysPy,
      maps_to: sysPy ? `system CPython ${sysPy} (no CPython 3.12 on this machine)` : "no Python on this machine",
      gaps: ["CPython 3.12 is not installed on this machine", ...extraGaps],
      binds: [],
      path: SYSTEM_PATH,
      env: { PYTHONUNBUFFERED: "1" },
    };
  };

  images.set(
    "python-3.12",
    pyImage("python-3.12", "CPython 3.12 with pip and common libs", [
      "common libraries beyond pip are not preinstalled; pip install them (network restricted or open)",
    ]),
  );
  images.set("python-3.12-bare", pyImage("python-3.12-bare", "CPython 3.12, standard library only", []));
  images.set(
    "code-interpreter",
    pyImage("code-interpreter", "CPython 3.12 for code interpretation (data-science stack)", [
      "numpy, pandas and matplotlib are not preinstalled on this machine",
    ]),
  );
  images.set("node-22", {
    id: "node-22",
    description: "Node.js 22 with npm",
    available: !!node,
    maps_to: node
      ? `host Node.js ${node} (/usr/bin/node), host Debian ${debian} userland`
      : "no Node.js on this machine",
    gaps: node && !node.startsWith("v22") ? [`this machine has Node.js ${node}, not 22`] : [],
    binds: [],
    path: SYSTEM_PATH,
    env: {},
  });
  images.set("debian-12", {
    id: "debian-12",
    description: "Debian 12 userland",
    available: true,
    maps_to: `host Debian ${debian} userland, read-only`,
    gaps: debian.startsWith("12") ? [] : [`host is Debian ${debian}`],
    binds: [],
    path: SYSTEM_PATH,
    env: {},
  });
  return images;
}

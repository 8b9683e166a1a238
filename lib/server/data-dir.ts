import "server-only";
import fs from "node:fs";
import path from "node:path";

// The console's files hold secrets: the SQLite database (password hashes, session ids, encrypted
// tokens), its WAL (recent writes, in clear), and secret.key (the vault key). None of them may be
// readable by other users of the machine, including files an older Baton created with the
// default umask (data/ 0755, baton.sqlite 0644): both are tightened at start.

/** SQLite's companions of a database file: same contents, so the same mode. */
const SQLITE_SIDE_FILES = ["-wal", "-shm", "-journal"] as const;

function tighten(file: string, mode: number, warn: (m: string) => void): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return; // not there (yet)
  }
  const current = st.mode & 0o7777;
  const wanted = current & mode;
  if (wanted === current) return;
  try {
    fs.chmodSync(file, wanted);
  } catch (err) {
    warn(`[baton] could not restrict ${file} to mode ${wanted.toString(8)}: ${(err as Error).message}`);
  }
}

/**
 * The data directory: created 0700; an existing one loses group and other read and write (its
 * search bits stay: the embedded engine keeps its sandboxes under data/engine/ and needs
 * sandbox uids to pass through, see engine/src/runtime/host.ts ensureTraversable). secret.key
 * becomes 0600 if it is more open.
 */
export function secureDataDir(dir: string, warn: (m: string) => void = console.warn): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  tighten(dir, ~0o066, warn);
  tighten(path.join(dir, "secret.key"), 0o600, warn);
}

/**
 * A SQLite database file before it is opened: created empty with mode 0600 if missing (SQLite then
 * gives its WAL and shared-memory files the database file's mode), and the file and its WAL,
 * shared-memory and journal files restricted to 0600 if an older version left them open.
 */
export function secureSqliteFile(file: string, warn: (m: string) => void = console.warn): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_WRONLY, 0o600));
  } catch (err) {
    warn(`[baton] could not create ${file}: ${(err as Error).message}`);
  }
  for (const f of [file, ...SQLITE_SIDE_FILES.map((s) => `${file}${s}`)]) tighten(f, 0o600, warn);
}

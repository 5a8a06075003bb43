// Data at rest is private to the user running Flowport, whatever the umask: the data dir is
// created 0700 and every file Flowport writes there (SQLite database, WAL and SHM, the secret
// key, sandbox credentials) is 0600. An existing directory the operator chose keeps its mode
// (it may be shared, e.g. a mount point); the files in it are still 0600.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` (and missing parents) 0700; an existing directory is left as it is. */
export function ensurePrivateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir applies the umask; a umask can only remove bits, but chmod makes the mode exact.
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Creates `file` empty if missing, and makes it 0600 either way. */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  chmodSync(file, PRIVATE_FILE_MODE);
}

/** Makes `file` 0600 if it exists. */
export function tightenIfExists(file: string): void {
  try {
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

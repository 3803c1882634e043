import { chmodSync, closeSync, constants, fchmodSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/** The database file in a data folder. */
export function databasePath(dataDir: string): string {
  return join(dataDir, 'switchboard.db');
}

/** The key that seals client secrets and engine API keys, beside the database. */
export function secretKeyPath(dataDir: string): string {
  return join(dataDir, 'secret.key');
}

/** The data folder holds every transcript and the key to the client secrets: its owner only. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

// Windows has no mode bits (ACLs instead): chmod there only toggles read-only.
const POSIX = process.platform !== 'win32';

/**
 * Creates `dir` and any missing parent owner-only. The modes are set with chmod after mkdir, so
 * neither a loose umask (022 is Node's usual) nor a strict one (which could leave the folder
 * unwritable) decides them. A folder that already exists is left exactly as it is.
 */
export function ensurePrivateDir(dir: string): void {
  const target = resolve(dir);
  const first = mkdirSync(target, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined || !POSIX) return;
  for (let d = target; ; d = dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === first || dirname(d) === d) break;
  }
}

/**
 * Creates `path` as an empty 0600 file unless it exists; true when it was created here. SQLite
 * gives the -wal and -shm files the mode of the database file, so creating the database this way
 * before SQLite opens it keeps all three private.
 */
export function ensurePrivateFile(path: string, content?: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    if (POSIX) fchmodSync(fd, PRIVATE_FILE_MODE);
    if (content !== undefined) writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

export interface LoosePath {
  path: string;
  mode: number;
}

/** The folder and those of `files` that exist and that someone other than the owner may use. */
export function loosePaths(dir: string, files: readonly string[]): LoosePath[] {
  if (!POSIX) return [];
  const out: LoosePath[] = [];
  for (const path of [dir, ...files]) {
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) out.push({ path, mode });
  }
  return out;
}

const octal = (mode: number): string => mode.toString(8).padStart(4, '0');
const quote = (path: string): string => `'${path.replace(/'/g, `'\\''`)}'`;

/**
 * One line for the operator when the folder or a file in it is open to other local users, with the
 * command that closes it; null when all is private. Switchboard never changes the mode of an
 * existing folder itself: `--data-dir` may name a folder it does not own alone (a home directory,
 * a shared volume), and a chmod there could break other programs that rely on it.
 */
export function permissionWarning(dir: string, files: readonly string[]): string | null {
  const loose = loosePaths(dir, files);
  if (loose.length === 0) return null;
  const found = loose.map((l) => `${l.path === dir ? l.path : basename(l.path)} ${octal(l.mode)}`).join(', ');
  const dirLoose = loose.filter((l) => l.path === dir);
  const filesLoose = loose.filter((l) => l.path !== dir);
  const commands = [
    ...dirLoose.map((l) => `chmod 700 ${quote(l.path)}`),
    ...(filesLoose.length ? [`chmod 600 ${filesLoose.map((l) => quote(l.path)).join(' ')}`] : []),
  ];
  return `warning: the data folder is open to other local users (${found}); to make it private run: ${commands.join(' && ')}`;
}

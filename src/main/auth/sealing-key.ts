import { createHash, createHmac, randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync, fchmodSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE, secretKeyPath } from '../store/data-dir.ts';

/**
 * The key that seals client secrets and engine API keys at rest. Every node that opens the same
 * database must have the same one; the key id (public: 4 bytes of its SHA-256) is written into
 * every sealed value, so a node with another key says which key it has and which one it needs.
 */
export interface SealingKey {
  /** 8 hex digits. */
  readonly id: string;
  /** Where it came from, for messages: a path, or the environment variable's name. Never the key. */
  readonly source: string;
  readonly bytes: Buffer;
}

export class SecretKeyError extends Error {}

export const KEY_ENV = 'SWITCHBOARD_SECRET_KEY';
export const KEY_FILE_ENV = 'SWITCHBOARD_SECRET_KEY_FILE';
/** The key before a rotation, beside SWITCHBOARD_SECRET_KEY: it opens values, never seals (a key file's is `<file>.old`). */
export const KEY_PREVIOUS_ENV = 'SWITCHBOARD_SECRET_KEY_PREVIOUS';
export const KEY_BYTES = 32;

/**
 * Where this process takes its key from. A file named by flag, environment or config.json must
 * exist (a missing one is an error, never a fresh key: two nodes making their own keys is the very
 * mistake this guards against); the data folder's own `secret.key` is created on first use.
 */
export type KeySource =
  | { kind: 'file'; path: string; label: string; createIfMissing: boolean }
  | { kind: 'env'; text: string; label: string; previousText: string | null };

export interface KeySourceInputs {
  /** --secret-key-file, as typed (relative to the shell's directory). */
  flagFile?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  /** config.json's secretKeyFile (relative to the data folder). */
  configFile?: string | undefined;
  dataDir: string;
}

/** Precedence: --secret-key-file, then SWITCHBOARD_SECRET_KEY_FILE or SWITCHBOARD_SECRET_KEY (not both), then config.json, then the data folder. */
export function resolveKeySource(inputs: KeySourceInputs): KeySource {
  const source = keySourceOf(inputs);
  const previous = inputs.env[KEY_PREVIOUS_ENV];
  if (source.kind === 'file' && previous !== undefined && previous !== '') {
    // Silently ignored, it would leave values sealed under it unopened on this node with no clue why.
    throw new SecretKeyError(`${KEY_PREVIOUS_ENV} goes with ${KEY_ENV}; this node's key comes from ${source.label}, whose previous key is the file ${previousKeyPath(source.path)}`);
  }
  return source;
}

function keySourceOf(inputs: KeySourceInputs): KeySource {
  if (inputs.flagFile !== undefined) {
    if (inputs.flagFile === '') throw new SecretKeyError('--secret-key-file needs a path');
    return { kind: 'file', path: resolve(inputs.flagFile), label: `--secret-key-file ${resolve(inputs.flagFile)}`, createIfMissing: false };
  }
  const envFile = inputs.env[KEY_FILE_ENV];
  const envKey = inputs.env[KEY_ENV];
  if (envFile !== undefined && envFile !== '' && envKey !== undefined && envKey !== '') {
    throw new SecretKeyError(`both ${KEY_FILE_ENV} and ${KEY_ENV} are set: give the key one way only`);
  }
  if (envFile) return { kind: 'file', path: resolve(envFile), label: `${KEY_FILE_ENV}=${resolve(envFile)}`, createIfMissing: false };
  if (envKey) return { kind: 'env', text: envKey, label: KEY_ENV, previousText: inputs.env[KEY_PREVIOUS_ENV] || null };
  if (inputs.configFile !== undefined) {
    const path = resolve(inputs.dataDir, inputs.configFile);
    return { kind: 'file', path, label: `secretKeyFile ${path} (config.json)`, createIfMissing: false };
  }
  const path = secretKeyPath(inputs.dataDir);
  return { kind: 'file', path, label: path, createIfMissing: true };
}

export function keyIdOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 8);
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** A key as written in a file or variable: base64 (or base64url) of 32 bytes, surrounding white space ignored. */
export function parseKey(text: string, source: string): SealingKey {
  const trimmed = text.trim();
  if (trimmed === '') throw new SecretKeyError(`${source} is empty: it must hold a 32-byte key in base64 (make one with: npm run cli -- secrets new-key FILE)`);
  if (!BASE64.test(trimmed)) throw new SecretKeyError(`${source} is not base64: it must hold a 32-byte key in base64 (make one with: npm run cli -- secrets new-key FILE)`);
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== KEY_BYTES) throw new SecretKeyError(`${source} holds ${bytes.length} bytes, not a 32-byte key; restore it from backup or make one with: npm run cli -- secrets new-key FILE`);
  return { id: keyIdOf(bytes), source, bytes };
}

/** What a key file holds: base64url of the key and a newline (the format the data folder's key always had). */
export function keyFileText(bytes: Buffer): string {
  return bytes.toString('base64url') + '\n';
}

export function newKey(source: string): SealingKey {
  const bytes = randomBytes(KEY_BYTES);
  return { id: keyIdOf(bytes), source, bytes };
}

export function readKeyFile(path: string, label: string): SealingKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message;
    throw new SecretKeyError(`cannot read the secret key ${label}: ${why}`);
  }
  return parseKey(text, label);
}

function createKeyFile(path: string, label: string): SealingKey {
  ensurePrivateDir(dirname(path));
  const key = newKey(label);
  // Exclusive create: if another process (the CLI) made the key meanwhile, this reads theirs.
  if (!ensurePrivateFile(path, keyFileText(key.bytes))) return readKeyFile(path, label);
  return key;
}

/** The key a source names, created if it is the data folder's and missing. */
export function loadKey(source: KeySource): SealingKey {
  if (source.kind === 'env') return parseKey(source.text, source.label);
  try {
    statSync(source.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && source.createIfMissing) return createKeyFile(source.path, source.label);
  }
  return readKeyFile(source.path, source.label);
}

/** The key that opened values before the last rotation, kept beside the key file until no value needs it. */
export function previousKeyPath(path: string): string {
  return `${path}.old`;
}

/** The previous key: a file source's `.old` file if it exists, SWITCHBOARD_SECRET_KEY_PREVIOUS if set. */
export function loadPreviousKey(source: KeySource): SealingKey | null {
  if (source.kind === 'env') return source.previousText === null ? null : parseKey(source.previousText, KEY_PREVIOUS_ENV);
  const path = previousKeyPath(source.path);
  try {
    statSync(path);
  } catch {
    return null;
  }
  return readKeyFile(path, path);
}

/**
 * One line when a key file named outside the data folder may be read by other local users (the
 * data folder's own files have the data folder's warning). Never changes the mode itself.
 */
export function keyFileModeWarning(source: KeySource): string | null {
  if (source.kind !== 'file' || process.platform === 'win32') return null;
  let mode: number;
  try {
    mode = statSync(source.path).mode & 0o777;
  } catch {
    return null;
  }
  if ((mode & 0o077) === 0) return null;
  return `warning: the secret key ${source.label} is open to other local users (${mode.toString(8).padStart(4, '0')}); to make it private run: chmod 600 '${source.path.replace(/'/g, `'\\''`)}'`;
}

export function keyHmac(key: SealingKey, message: string): Buffer {
  return createHmac('sha256', key.bytes).update(message, 'utf8').digest();
}

/**
 * Replaces `path` with `text` so that a crash leaves either the old file or the new one, never a
 * part: a 0600 temporary file beside it, written and flushed, renamed over it, then the folder
 * flushed so the rename itself survives a power cut.
 */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${dirname(path)}/.${basename(path)}.${process.pid}.tmp`;
  const fd = openSync(temp, constants.O_CREAT | constants.O_TRUNC | constants.O_WRONLY, PRIVATE_FILE_MODE);
  try {
    if (process.platform !== 'win32') fchmodSync(fd, PRIVATE_FILE_MODE);
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, path);
  syncFolder(dirname(path));
}

function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

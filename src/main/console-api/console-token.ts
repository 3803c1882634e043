import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { keyFileHmac, type Keyring } from '../auth/secret-box.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';

/** The settings this module reads and writes; the store's `settings` has them. */
export interface TokenSettings {
  get(key: string): string | undefined;
  put(key: string, value: string): void;
  delete(key: string): void;
}

/** Salt and sha256 of the console token: the token itself is never stored (section 9). */
export const TOKEN_SETTING = 'console_token_hash';
/** Where versions before v1.1 kept the token in plain text. */
export const LEGACY_TOKEN_SETTING = 'console_token';

const storedSchema = z.object({ salt: z.string().min(16).max(64), sha256: z.string().length(43) });
type Stored = z.infer<typeof storedSchema>;

function sha256(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function readStored(settings: Pick<TokenSettings, 'get'>): Stored | null {
  return parseStored(settings.get(TOKEN_SETTING));
}

function parseStored(raw: string | undefined): Stored | null {
  if (raw === undefined) return null;
  try {
    const parsed = storedSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The token is derived from the data folder's key and a stored salt, so `serve` can print the
 * same URL after every restart without the token ever sitting in the database. `key` is the
 * sealing key (or the path of the data folder's key file): another key derives another token.
 */
export function deriveConsoleToken(key: string | Keyring, salt: string): string {
  return keyFileHmac(key, `switchboard-console-token:${salt}`).toString('base64url');
}

const recordOf = (salt: string, token: string): string => JSON.stringify({ salt, sha256: sha256(token).toString('base64url') } satisfies Stored);

function store(settings: TokenSettings, salt: string, token: string): void {
  settings.put(TOKEN_SETTING, recordOf(salt, token));
  settings.delete(LEGACY_TOKEN_SETTING);
}

export interface ConsoleTokenAtStart {
  token: string;
  /** A plain-text token of an older version was found and replaced: its URLs stop working. */
  replacedPlainToken: boolean;
}

/** What `serve` calls at start: the current token, creating (or migrating to) a salted hash. */
export function consoleTokenAtStart(settings: TokenSettings, key: string | Keyring): ConsoleTokenAtStart {
  const replacedPlainToken = settings.get(LEGACY_TOKEN_SETTING) !== undefined;
  const stored = readStored(settings);
  const salt = stored?.salt ?? randomBytes(18).toString('base64url');
  const token = deriveConsoleToken(key, salt);
  // A replaced key file derives another token: store its hash so the URL printed now works.
  if (!stored || stored.sha256 !== sha256(token).toString('base64url') || replacedPlainToken) store(settings, salt, token);
  return { token, replacedPlainToken };
}

/** Settings shared by several nodes (PostgreSQL): `putIfAbsent` writes unless a value is stored, and returns the value stored then. */
export interface SharedTokenSettings {
  get(key: string): Promise<string | undefined> | string | undefined;
  putIfAbsent(key: string, value: string): Promise<string>;
  put(key: string, value: string): Promise<void> | void;
  delete(key: string): Promise<void> | void;
}

/**
 * consoleTokenAtStart for an installation whose nodes share one database and may start at once:
 * the first salt stored wins and every node derives its token from that salt and the key they
 * share, so each prints the same console URL.
 */
export async function sharedConsoleTokenAtStart(settings: SharedTokenSettings, key: string | Keyring): Promise<ConsoleTokenAtStart> {
  const replacedPlainToken = (await settings.get(LEGACY_TOKEN_SETTING)) !== undefined;
  const fresh = randomBytes(18).toString('base64url');
  const stored = parseStored(await settings.putIfAbsent(TOKEN_SETTING, recordOf(fresh, deriveConsoleToken(key, fresh))));
  const salt = stored?.salt ?? fresh;
  const token = deriveConsoleToken(key, salt);
  // Another key (or an unreadable record): this node's token is stored, as consoleTokenAtStart does.
  if (!stored || stored.sha256 !== sha256(token).toString('base64url')) await settings.put(TOKEN_SETTING, recordOf(salt, token));
  if (replacedPlainToken) await settings.delete(LEGACY_TOKEN_SETTING);
  return { token, replacedPlainToken };
}

/**
 * `console rotate-token`: a fresh salt, hence a fresh token; the old one stops working. On either
 * store (PostgreSQL's nodes read the stored hash again within a second, and derive the new token
 * from it at their next start).
 */
export async function rotateConsoleToken(settings: { put(key: string, value: string): Promise<void> | void; delete(key: string): Promise<void> | void }, key: string | Keyring): Promise<string> {
  const salt = randomBytes(18).toString('base64url');
  const token = deriveConsoleToken(key, salt);
  await settings.put(TOKEN_SETTING, recordOf(salt, token));
  await settings.delete(LEGACY_TOKEN_SETTING);
  return token;
}

/**
 * Checks a presented token against the stored hash in constant time. The hash is re-read at
 * most once per `refreshMs`, so a rotation by the CLI (another process) takes effect in the
 * running server within that time, without a database read on every request.
 */
export function createTokenCheck(settings: Pick<TokenSettings, 'get'>, clock: Pick<Clock, 'now'> = systemClock, refreshMs = 1000): (given: string) => boolean {
  let hash: Buffer | null = null;
  let readAt = -Infinity;
  return (given) => {
    if (clock.now() - readAt >= refreshMs) {
      const stored = readStored(settings);
      hash = stored ? Buffer.from(stored.sha256, 'base64url') : null;
      readAt = clock.now();
    }
    if (!hash || hash.length !== 32) return false;
    return timingSafeEqual(sha256(given), hash);
  };
}

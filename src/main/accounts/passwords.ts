import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { PASSWORD_MIN } from '../../shared/sign-in-api.ts';

/**
 * scrypt from node:crypto, run on libuv's thread pool (never on the event loop). N = 2^15, r = 8,
 * p = 1 is OWASP's current minimum for scrypt: 32 MiB and some tens of milliseconds per hash, which
 * is what makes a stolen database slow to guess from. The parameters are stored with each hash, so
 * raising them later leaves old hashes verifiable.
 */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1, keyLength: 32, saltBytes: 16 } as const;

/** Protocol v1.2, team mode: at least 12 characters (the page checks the same). The upper bound keeps one hash's input small. */
export const PASSWORD_MIN_CHARS = PASSWORD_MIN;
export const PASSWORD_MAX_CHARS = 1024;

/** Why `password` cannot be used, or null. Counted in code points, as a person counts characters. */
export function passwordProblem(password: string): string | null {
  const chars = [...password].length;
  if (chars < PASSWORD_MIN_CHARS) return `a password has at least ${PASSWORD_MIN_CHARS} characters`;
  if (chars > PASSWORD_MAX_CHARS) return `a password has at most ${PASSWORD_MAX_CHARS} characters`;
  return null;
}

function derive(password: string, salt: Buffer, n: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // maxmem: scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is exactly that at our N, with no room.
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltBytes } = SCRYPT_PARAMS;
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, N, r, p, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

/** Whether `password` matches `stored`; a stored value of any other shape matches nothing. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  const m = STORED.exec(stored);
  if (!m) return false;
  const [n, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Parameters read back from storage are bounded, so a tampered row cannot ask for gigabytes.
  if (n < 2 || n > 2 ** 20 || (n & (n - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64url');
  if (expected.length < 16 || expected.length > 64) return false;
  const key = await derive(password, Buffer.from(m[4]!, 'base64url'), n, r, p, expected.length);
  return timingSafeEqual(key, expected);
}

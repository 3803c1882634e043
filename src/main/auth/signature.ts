import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/** timestamp + "." + client + "." + JCS(message_info), section 3. */
export function signingString(timestamp: number, client: string, canonicalMessageInfo: string): string {
  return `${timestamp}.${client}.${canonicalMessageInfo}`;
}

/** The HMAC key object of a secret; built once per secret because it is ~6x cheaper per call. */
export function hmacKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

export function sign(key: KeyObject, data: string): string {
  return createHmac('sha256', key).update(data, 'utf8').digest('hex');
}

const HEX64 = /^[0-9a-f]{64}$/;

export function isWellFormedSignature(signature: string): boolean {
  return HEX64.test(signature);
}

/** Constant-time comparison against every active key; a malformed signature matches none. */
export function verify(keys: readonly KeyObject[], data: string, signature: string): boolean {
  if (!isWellFormedSignature(signature)) return false;
  const given = Buffer.from(signature, 'hex');
  let matched = false;
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(data, 'utf8').digest();
    // No early exit: the time taken does not tell which key matched.
    if (timingSafeEqual(expected, given)) matched = true;
  }
  return matched;
}

import { X509Certificate } from 'node:crypto';

/** SHA-256 of a certificate as browsers show it: upper-case hex pairs joined by colons. */
export function fingerprintOfPem(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

/** One spelling for comparing: upper case, colons (a user may paste lower case or spaces). */
export function normalizeFingerprint(text: string): string {
  const hex = text.replace(/[^0-9a-f]/gi, '').toUpperCase();
  return hex.match(/.{2}/g)?.join(':') ?? '';
}

/** A host as a pin's key: Chromium's certificate check names it without brackets or port. */
export function pinKey(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

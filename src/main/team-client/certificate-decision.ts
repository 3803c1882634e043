import type { CertificateTrust } from '../../shared/team-ipc.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { normalizeFingerprint, pinKey } from './fingerprint.ts';
import type { Pins } from './pin-store.ts';

/** Electron's setCertificateVerifyProc answers: accept, refuse, or Chromium's own verdict. */
export const VERIFY_ACCEPT = 0;
export const VERIFY_REFUSE = -2;
export const VERIFY_CHROMIUM = -3;

export function pinOf(pins: Pins, host: string): string | null {
  const key = pinKey(host);
  return Object.hasOwn(pins, key) ? pins[key]! : null;
}

/** How a certificate stands for a host, given what the user confirmed before. */
export function trustOf(host: string, fingerprint: string, publiclyTrusted: boolean, pins: Pins): CertificateTrust {
  const pinned = pinOf(pins, host);
  if (pinned !== null) return pinned === normalizeFingerprint(fingerprint) ? 'pinned' : 'changed';
  return publiclyTrusted ? 'public' : 'unverified';
}

export function changedMessage(host: string, pinned: string, shown: string): string {
  return `refused: the certificate of ${host} changed. You confirmed ${pinned}; the server now shows ${shown}. Someone may be intercepting the connection. Ask your administrator whether they replaced the certificate; only then choose "Forget the old certificate" and connect again.`;
}

/**
 * What the remote window's session says to each certificate Chromium sees (Electron's
 * `session.setCertificateVerifyProc`, and `certificate-error`): a pinned host only with its
 * confirmed certificate; any other host only when Chromium itself trusts it. A pure function of
 * host, fingerprint and pins.
 */
export function certificateVerdict(host: string, fingerprint: string, chromiumTrusts: boolean, pins: Pins): { result: number; refusal: string | null } {
  const trust = trustOf(host, fingerprint, chromiumTrusts, pins);
  switch (trust) {
    case 'pinned':
      return { result: VERIFY_ACCEPT, refusal: null };
    case 'public':
      // Chromium's own answer keeps its further checks (Certificate Transparency, revocation).
      return { result: VERIFY_CHROMIUM, refusal: null };
    case 'changed':
      return { result: VERIFY_REFUSE, refusal: changedMessage(host, pinOf(pins, host)!, normalizeFingerprint(fingerprint)) };
    case 'unverified':
      return { result: VERIFY_REFUSE, refusal: `refused: the certificate of ${host} (${normalizeFingerprint(fingerprint)}) is not publicly trusted and was never confirmed: use "Connect to a team server" to check its fingerprint` };
    default:
      return assertNever(trust, 'certificate trust');
  }
}

export type ConnectDecision = { ok: true; pin: string | null } | { ok: false; code: 'confirm_fingerprint' | 'fingerprint_mismatch' | 'certificate_changed'; message: string };

/**
 * Whether "Connect" may go ahead with what the check found and what the user confirmed: a
 * self-signed certificate needs its fingerprint confirmed (and is then pinned), a changed one is
 * refused whatever is confirmed.
 */
export function decideConnect(probe: { host: string; fingerprint: string; trust: CertificateTrust; pinned: string | null }, confirmed: string | null): ConnectDecision {
  switch (probe.trust) {
    case 'public':
    case 'pinned':
      return { ok: true, pin: null };
    case 'changed':
      return { ok: false, code: 'certificate_changed', message: changedMessage(probe.host, probe.pinned ?? '?', probe.fingerprint) };
    case 'unverified':
      if (confirmed === null) {
        return { ok: false, code: 'confirm_fingerprint', message: `the certificate of ${probe.host} is not publicly trusted (self-signed): compare its SHA-256 fingerprint ${probe.fingerprint} with the one your administrator gave you, then confirm it` };
      }
      if (normalizeFingerprint(confirmed) !== normalizeFingerprint(probe.fingerprint)) {
        return { ok: false, code: 'fingerprint_mismatch', message: `the server now shows ${probe.fingerprint}, not the fingerprint you confirmed (${normalizeFingerprint(confirmed)}): check the server again` };
      }
      return { ok: true, pin: normalizeFingerprint(probe.fingerprint) };
    default:
      return assertNever(probe.trust, 'certificate trust');
  }
}

/**
 * Text-level checks of a send_url. The delivery worker checks the resolved address again at
 * connect time, because a harmless-looking name can resolve to a forbidden address.
 */

const METADATA_HOSTS = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

function ipv4Octets(host: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

/** True for link-local and cloud metadata addresses, which are never a delivery target. */
export function isForbiddenAddress(address: string): boolean {
  let host = address.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.startsWith('::ffff:')) {
    const mapped = host.slice(7);
    if (ipv4Octets(mapped)) return isForbiddenAddress(mapped);
  }
  const v4 = ipv4Octets(host);
  if (v4) {
    const [a, b] = v4 as [number, number, number, number];
    if (a === 169 && b === 254) return true; // link-local, incl. 169.254.169.254 metadata
    if (host === '100.100.100.200') return true; // Alibaba Cloud metadata
    if (host === '192.0.0.192') return true; // Oracle Cloud metadata
    return false;
  }
  if (host.includes(':')) {
    if (/^fe[89ab][0-9a-f]:/.test(host)) return true; // fe80::/10 link-local
    if (host === 'fd00:ec2::254') return true; // AWS metadata over IPv6
    return false;
  }
  return METADATA_HOSTS.has(host.replace(/\.$/, ''));
}

export type SendUrlCheck = { ok: true; url: URL } | { ok: false; code: 'validation_failed' | 'send_url_not_allowed'; message: string };

export function checkSendUrl(raw: string, allowedOrigins: readonly string[] | undefined): SendUrlCheck {
  if (!URL.canParse(raw)) return { ok: false, code: 'validation_failed', message: 'must be an absolute http or https URL' };
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, code: 'validation_failed', message: 'must be an absolute http or https URL' };
  }
  if (url.username || url.password) {
    return { ok: false, code: 'validation_failed', message: 'must not contain credentials' };
  }
  if (isForbiddenAddress(url.hostname)) {
    return { ok: false, code: 'send_url_not_allowed', message: 'link-local and cloud metadata addresses are never allowed' };
  }
  if (allowedOrigins && allowedOrigins.length > 0 && !allowedOrigins.includes(url.origin)) {
    return {
      ok: false,
      code: 'send_url_not_allowed',
      message: `origin ${url.origin} is not in this client's allowlist (${allowedOrigins.join(', ')})`,
    };
  }
  return { ok: true, url };
}

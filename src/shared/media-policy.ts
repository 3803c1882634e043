/**
 * When the console loads an attachment. Integrators send attachments as URLs; loading one tells
 * its server the operator's address and, for a LAN or loopback URL, lets an integrator reach
 * into the operator's network. So:
 * - `data:` URLs are already here: shown inline.
 * - plain `http:` is never loaded (clear text, and the usual spelling of a LAN address): the
 *   console shows the URL as text.
 * - `https:` loads when the operator clicks "Load", or at once when its origin is one of the
 *   client's `mediaOrigins` setting.
 * Anything else (plain base64, other schemes, text that is no URL) is not loaded either.
 */

export type MediaKind = 'image' | 'audio' | 'file';

export type MediaDecision =
  | { load: 'inline'; src: string }
  | { load: 'on_click'; src: string; origin: string }
  | { load: 'never'; reason: 'plain_http'; url: string }
  | { load: 'never'; reason: 'not_a_url' };

/** `https://host[:port]` exactly as URL.origin spells it: no path, no trailing slash, lower case. */
export function isHttpsOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  // The URL parser lets `*` through as a host; a wildcard would never match, so say so instead.
  const host = /^[a-z0-9.-]+$/.test(url.hostname) || /^\[[0-9a-f:.]+\]$/.test(url.hostname);
  return url.protocol === 'https:' && url.origin === value && host;
}

/** What the protocol's `file_type` says, loosely: integrators write "image", "image/png", "voice"... */
export function mediaKind(fileType: unknown): MediaKind {
  const type = String(fileType ?? '');
  if (/image/i.test(type)) return 'image';
  if (/voice|audio/i.test(type)) return 'audio';
  return 'file';
}

export function mediaDecision(content: unknown, mediaOrigins: readonly string[]): MediaDecision {
  if (typeof content !== 'string') return { load: 'never', reason: 'not_a_url' };
  const text = content.trim();
  if (/^data:/i.test(text)) return { load: 'inline', src: text };
  if (!URL.canParse(text)) return { load: 'never', reason: 'not_a_url' };
  const url = new URL(text);
  switch (url.protocol) {
    case 'http:':
      return { load: 'never', reason: 'plain_http', url: url.href };
    case 'https:':
      return mediaOrigins.includes(url.origin) ? { load: 'inline', src: url.href } : { load: 'on_click', src: url.href, origin: url.origin };
    default:
      return { load: 'never', reason: 'not_a_url' };
  }
}

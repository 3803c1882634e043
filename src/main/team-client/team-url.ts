import { TeamClientError } from './team-client-error.ts';

export interface TeamServerAddress {
  /** https://host[:port] */
  origin: string;
  /** The host name as pins key it (no brackets, lower case). */
  host: string;
  port: number;
  /** What the window opens first: the URL as given (a `#token=` or a sign-in link stays), same origin. */
  url: string;
}

/**
 * The address the user typed: a full https:// URL or a bare host[:port]. Plain http:// is refused:
 * the session token and every conversation would cross the network readable.
 */
export function parseTeamServerUrl(text: string): TeamServerAddress {
  const trimmed = text.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new TeamClientError('bad_url', `"${trimmed.slice(0, 100)}" is not an address: give the team server's URL, such as https://support.example.com:8788`);
  }
  if (url.protocol !== 'https:') throw new TeamClientError('bad_url', `a team server is reached over https:// only (got ${url.protocol}//): ask your administrator for its https address`);
  if (url.username || url.password) throw new TeamClientError('bad_url', 'the address must not carry a user name or password');
  url.search = '';
  return { origin: url.origin, host: url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase(), port: Number(url.port || 443), url: url.href };
}

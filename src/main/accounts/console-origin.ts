import { LINK_FRAGMENT } from '../../shared/sign-in-api.ts';
import type { SignInLinkView } from '../../shared/console-accounts.ts';

/**
 * Where others open this installation's console: the configured public origin (a team server
 * behind a TLS proxy) when there is one, else the console port on 127.0.0.1. Structural on
 * purpose: a config without `publicOrigin` (the loopback-only console) fits as it is.
 * `port` is the port the listener got; without it, the config's, which may be 0 (any free port):
 * then the address is not known (null).
 */
export function consoleOriginOf(config: { consolePort: number; publicOrigin?: string | null }, port: number = config.consolePort): string | null {
  if (config.publicOrigin) return new URL(config.publicOrigin).origin;
  return port === 0 ? null : `http://127.0.0.1:${port}`;
}

/** A one-time sign-in link as the agent opens it: the secret in the fragment, which no server or log sees. */
export function signInLinkView(origin: string | null, secret: string, expiresAt: number): SignInLinkView {
  const fragment = `#${LINK_FRAGMENT}=${secret}`;
  return { url: origin === null ? null : `${origin.replace(/\/+$/, '')}/${fragment}`, fragment, expiresAt };
}

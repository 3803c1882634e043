import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction, Socket } from 'node:net';
import { isForbiddenAddress } from '../../shared/protocol/send-url.ts';
import { ATTEMPT_TIMEOUT_MS, type SendResult } from './retry-policy.ts';

export interface Delivery {
  url: string;
  body: string;
  idempotencyKey: string;
}

export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true }, callback);

/** Decides whether an address (as the resolver or the socket reports it) may be connected to. */
export type AddressGuard = (address: string) => boolean;

class ForbiddenAddress extends Error {}

/**
 * The SSRF guard at resolve time: the name is resolved here and every address it resolves to is
 * checked, so a harmless-looking name pointing at a metadata service is refused before connecting.
 */
function guardedLookup(resolve: Resolver, isForbidden: AddressGuard): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname, (error, addresses) => {
      if (error) return callback(error);
      const bad = addresses.find((a) => isForbidden(a.address));
      if (bad) return callback(new ForbiddenAddress(`${hostname} resolves to ${bad.address}, a link-local or metadata address`));
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`));
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as LookupFunction;
}

/**
 * The SSRF guard on the address actually connected to. Node skips `lookup` for IP literals, so
 * this is the only check that sees them at connect time. It runs first among the 'connect'
 * listeners, before the socket flushes the queued request (or starts a TLS handshake), so a
 * refused socket is destroyed without a byte of the delivery written. A keep-alive socket taken
 * from the pool is already connected and is checked at once.
 */
function guardSocket(socket: Socket, isForbidden: AddressGuard): void {
  const check = (): void => {
    const address = socket.remoteAddress;
    if (address === undefined) socket.destroy(new ForbiddenAddress('the connected address is unknown'));
    else if (isForbidden(address)) socket.destroy(new ForbiddenAddress(`connected to ${address}, a link-local or metadata address`));
  };
  if (socket.connecting) socket.prependOnceListener('connect', check);
  else check();
}

export interface SenderOptions {
  timeoutMs?: number;
  resolve?: Resolver;
  maxSockets?: number;
  /** The connect-time guard, for resolved and connected addresses; tests inject a stricter one. */
  isForbidden?: AddressGuard;
}

export type Sender = (delivery: Delivery) => Promise<SendResult>;

/** POSTs one delivery. Redirects are not followed; the whole attempt is bounded by the time-out. */
export function createSender(options: SenderOptions = {}): Sender & { close(): void } {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const isForbidden = options.isForbidden ?? isForbiddenAddress;
  const lookup = guardedLookup(options.resolve ?? systemResolver, isForbidden);
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: options.maxSockets ?? 64 }),
  };

  const send = (delivery: Delivery): Promise<SendResult> =>
    new Promise((resolve) => {
      let url: URL;
      try {
        url = new URL(delivery.url);
      } catch {
        return resolve({ kind: 'error', error: `send_url is not a URL: ${delivery.url}`, permanent: true });
      }
      if (isForbiddenAddress(url.hostname)) {
        return resolve({ kind: 'error', error: `${url.hostname} is a link-local or metadata address`, permanent: true });
      }
      const isHttps = url.protocol === 'https:';
      let settled = false;
      const finish = (result: SendResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const req = (isHttps ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          agent: isHttps ? agents.https : agents.http,
          lookup,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(delivery.body),
            'idempotency-key': delivery.idempotencyKey,
            'user-agent': 'Switchboard/1',
          },
        },
        (res: IncomingMessage) => {
          const retryAfter = res.headers['retry-after'];
          // Drain the body so the connection can be reused; its content does not matter.
          res.resume();
          res.on('end', () => finish({ kind: 'response', status: res.statusCode ?? 0, retryAfter: typeof retryAfter === 'string' ? retryAfter : null }));
          res.on('error', (e) => finish({ kind: 'error', error: e.message, permanent: false }));
        },
      );
      req.on('socket', (socket: Socket) => guardSocket(socket, isForbidden));
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('error', (e) => finish({ kind: 'error', error: e.message, permanent: e instanceof ForbiddenAddress }));
      req.end(delivery.body);
    });

  return Object.assign(send, {
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  });
}

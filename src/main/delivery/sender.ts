import { request as httpRequest, Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isForbiddenAddress } from '../../shared/protocol/send-url.ts';
import { ATTEMPT_TIMEOUT_MS, type SendResult } from './retry-policy.ts';

export interface Delivery {
  url: string;
  body: string;
  idempotencyKey: string;
}

export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true }, callback);

class ForbiddenAddress extends Error {}

/**
 * The SSRF guard at connect time: the name is resolved here and every address it resolves to is
 * checked, so a harmless-looking name pointing at a metadata service is refused.
 */
function guardedLookup(resolve: Resolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolve(hostname, (error, addresses) => {
      if (error) return callback(error);
      const bad = addresses.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(new ForbiddenAddress(`${hostname} resolves to ${bad.address}, a link-local or metadata address`));
      if (addresses.length === 0) return callback(new Error(`${hostname} has no address`));
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  }) as LookupFunction;
}

export interface SenderOptions {
  timeoutMs?: number;
  resolve?: Resolver;
  maxSockets?: number;
}

export type Sender = (delivery: Delivery) => Promise<SendResult>;

/** POSTs one delivery. Redirects are not followed; the whole attempt is bounded by the time-out. */
export function createSender(options: SenderOptions = {}): Sender & { close(): void } {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const lookup = guardedLookup(options.resolve ?? systemResolver);
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

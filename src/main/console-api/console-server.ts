import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { readFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';
import { dispatch } from './handlers.ts';
import type { ConsoleAccounts } from '../accounts/console-accounts.ts';
import { signInRoute } from './sign-in-routes.ts';
import type { EventBus } from './events.ts';
import { CONSOLE_CSP } from '../../shared/csp.ts';
import { bearerToken, checkCaller, checkHost, checkNoQueryToken, checkOrigin, type Refusal } from './console-guard.ts';
import { answerThenDrain, ClientAborted, readJsonBody } from './console-body.ts';
import type { ConsoleAccess } from './console-access.ts';
import { clientAddress } from './client-address.ts';

/** The endpoint's own limits (src/main/http/server.ts): a slow client is cut off the same way here. */
export const CONSOLE_HEADERS_TIMEOUT_MS = 30_000;
export const CONSOLE_REQUEST_TIMEOUT_MS = 60_000;

export interface ConsoleServerOptions {
  /** Folder of the built renderer (electron-vite's out/renderer). */
  rendererDir: string;
  /** Who a bearer token is (the owner's console token, an agent's session), sign-in, revocation. */
  accounts: ConsoleAccounts;
  handlers: ConsoleHandlers;
  events: EventBus;
  /** One line per noteworthy event (an aborted request, an unexpected error). */
  log?: (line: string) => void;
  /** Team mode: HTTPS with this certificate and key (PEM); plain HTTP without. */
  tls?: { cert: string | Buffer; key: string | Buffer } | null;
  /** The Host names and origins answered (console-access.ts); loopback names only by default. */
  access?: ConsoleAccess;
  /** Proxies whose X-Forwarded-For names the caller (client-address.ts); none by default. */
  trustedProxies?: ReadonlySet<string>;
  /** Tests shorten these; the defaults are the endpoint's. */
  timeouts?: { headersMs: number; requestMs: number; checkEveryMs?: number };
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': CONSOLE_CSP,
};

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...HEADERS, ...headers, 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/** API answers, refusals included, are data: `{ ok: false, error: { code, message } }`. */
function data(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...HEADERS, ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A refusal before the body is read drains that body, so the client sees the answer, not a reset. */
function refuse(req: IncomingMessage, res: ServerResponse, r: Refusal, asData: boolean): void {
  const body = asData ? JSON.stringify({ ok: false, error: { code: r.code, message: r.message } }) : r.message;
  const headers = { ...HEADERS, ...r.headers, 'content-type': asData ? 'application/json' : 'text/plain; charset=utf-8' };
  const unread = !req.complete && (Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined);
  if (unread) return answerThenDrain(req, res, r.status, headers, body);
  res.writeHead(r.status, headers);
  res.end(body);
}

function statusOf(code: string): number {
  if (code === 'unknown_method' || code === 'not_found') return 404;
  if (code === 'forbidden') return 403;
  if (code === 'engine_timeout') return 504;
  // An Undo refused because the conversation moved on (or the window closed): a conflict with its state, not bad input.
  if (code.startsWith('undo_')) return 409;
  // A reply or note whose author had not seen what arrived since they started it: nothing was sent.
  if (code === 'conversation_changed') return 409;
  // A proposal someone else decided meanwhile.
  if (code === 'already_decided') return 409;
  return code === 'internal_error' ? 500 : 400;
}

/**
 * The headless console listener (section 9). The page and its assets are public build output;
 * every /api/* call needs `Authorization: Bearer <token>` (the page reads the token from the
 * URL fragment), state changes need JSON, and a browser request from another origin is refused
 * whatever it carries.
 */
/** An event as an SSE frame, serialized once however many streams send it. */
const frames = new WeakMap<object, string>();
function frameOf(event: object): string {
  let frame = frames.get(event);
  if (frame === undefined) frames.set(event, (frame = `data: ${JSON.stringify(event)}\n\n`));
  return frame;
}

/** How often an open event stream checks that its token is still the console's. */
const TOKEN_RECHECK_MS = 1000;

export function createConsoleServer(options: ConsoleServerOptions): Server {
  const trustedProxies = options.trustedProxies ?? new Set<string>();
  const log = options.log ?? (() => {});
  const timeouts = options.timeouts ?? { headersMs: CONSOLE_HEADERS_TIMEOUT_MS, requestMs: CONSOLE_REQUEST_TIMEOUT_MS };

  function events(req: IncomingMessage, res: ServerResponse, address: string | null, caller: Caller): void {
    const session = caller.session;
    // Server-sent events: one stream per open console, a comment every 15 s keeps it open.
    res.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
    res.write(': connected\n\n');
    // A stream outlives the check made when it opened: once its token is revoked (console
    // rotate-token, a sign-out, a disabled or removed agent) it is closed within a second (the
    // timer below), and at once when this process ended the session. The check runs on the timer,
    // not per event: with 50 consoles, a token check and a serialization per event per stream were
    // a sixth of the main thread's time (bench/team), and the check is cached for a second anyway.
    const token = bearerToken(req) ?? '';
    // Who this stream is, refreshed by the check: the owner's id can change under an open stream.
    let current = caller;
    const stillValid = async (): Promise<boolean> => {
      try {
        const now = await options.accounts.callerOf(token, address);
        if (now) current = now;
        return now !== null;
      } catch (error) {
        // A busy database must not end the process from a timer: keep the stream, ask again next second.
        log(`console: event stream check failed: ${(error as Error).message}`);
        return true;
      }
    };
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    // One check at a time: a slow database skips a tick rather than piling checks up.
    let checking = false;
    const recheck = setInterval(() => {
      if (checking) return;
      checking = true;
      void stillValid().then((valid) => {
        checking = false;
        if (!valid) close();
      });
    }, TOKEN_RECHECK_MS);
    // Events of one turn of the loop go out in one write per stream.
    let queued: string[] = [];
    const flush = (): void => {
      if (closed || !queued.length) return;
      res.write(queued.join(''));
      queued = [];
    };
    // Events for other accounts (team mode: an alert for a colleague's conversation, their mention) never reach this stream.
    const unsubscribe = options.events.subscribe(
      (event) => {
        if (!queued.length) setImmediate(flush);
        queued.push(frameOf(event));
      },
      // The owner's stream takes the owner as last read at each event (a session's account id never
      // changes): the owner can rename themselves, and a mention of the new id must reach them at once.
      { caller: () => (current.owner && current.session === null ? options.accounts.ownerCaller(address) : current), stream: true },
    );
    const stopWatching = session ? options.accounts.onRevoked((ended) => ended.has(session) && close()) : () => {};
    let closed = false;
    function close(): void {
      if (closed) return;
      closed = true;
      clearInterval(ping);
      clearInterval(recheck);
      unsubscribe();
      stopWatching();
      res.end();
    }
    req.on('close', close);
  }

  async function api(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const crossSite = checkOrigin(req, options.access);
    if (crossSite) return refuse(req, res, crossSite, true);
    const address = clientAddress(req, trustedProxies);
    // Sign-in comes before any token: its routes check their own input and limits.
    if (path.startsWith('/api/auth/')) return signInRoute(req, res, path.slice('/api/auth/'.length), options.accounts, address ?? 'unknown', refuse, data);
    const authorized = await checkCaller(req, (token) => options.accounts.callerOf(token, address));
    if (!('caller' in authorized)) return refuse(req, res, authorized, true);
    const { caller } = authorized;
    if (path === '/api/events') {
      if (req.method !== 'GET') return refuse(req, res, { status: 405, code: 'method_not_allowed', message: 'the event stream is read with GET', headers: { allow: 'GET' } }, true);
      return events(req, res, address, caller);
    }
    if (req.method !== 'POST') return refuse(req, res, { status: 405, code: 'method_not_allowed', message: 'console API methods are called with POST', headers: { allow: 'POST' } }, true);
    const body = await readJsonBody(req);
    if (!('input' in body)) return refuse(req, res, body, true);
    const result = await dispatch(options.handlers, path.slice(5), body.input, caller, log);
    data(res, result.ok ? 200 : statusOf(result.error.code), result);
  }

  async function page(res: ServerResponse, path: string): Promise<void> {
    let rel: string;
    try {
      rel = path === '/' ? 'index.html' : decodeURIComponent(path.slice(1));
    } catch {
      return plain(res, 404, 'not found');
    }
    // A NUL makes every fs call throw: no file has one in its name.
    const file = rel.includes('\0') ? '' : normalize(join(options.rendererDir, rel));
    // Only files are served: a folder (/assets/) is not found, not a read that fails with EISDIR.
    const stat = file.startsWith(normalize(options.rendererDir) + sep) ? statSync(file, { throwIfNoEntry: false }) : undefined;
    if (stat?.isFile() !== true) {
      if (!existsSync(join(options.rendererDir, 'index.html'))) return plain(res, 503, 'console is not built yet: run `npm run build`');
      return plain(res, 404, 'not found');
    }
    res.writeHead(200, { ...HEADERS, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(await cachedFile(file, stat.mtimeMs, stat.size));
  }

  /**
   * The built console's files, read once and shared: each request's answer is the same buffer, so
   * 500 connections that ask for the 1.4 MB bundle and never read it hold one copy, not 500 (a
   * review measured RSS 152 -> 791 MiB, and 2.8 GB with pipelined requests, before).
   */
  const files = new Map<string, { mtimeMs: number; size: number; content: Promise<Buffer> }>();
  function cachedFile(file: string, mtimeMs: number, size: number): Promise<Buffer> {
    const known = files.get(file);
    if (known && known.mtimeMs === mtimeMs && known.size === size) return known.content;
    const content = readFile(file);
    files.set(file, { mtimeMs, size, content });
    content.catch(() => files.delete(file));
    return content;
  }

  // requireHostHeader off: a request without Host gets checkHost's refusal, as JSON, not Node's bare 400.
  const serverOptions = { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: timeouts.checkEveryMs ?? 30_000, requireHostHeader: false };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      // `//` is a URL with an empty host: it once threw here, outside every catch, and ended the process.
      return refuse(req, res, { status: 400, code: 'bad_request', message: 'the request target is not a valid path' }, false);
    }
    const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/');
    const early = checkHost(req, options.access) ?? checkNoQueryToken(url);
    if (early) return refuse(req, res, early, isApi);
    (isApi ? api(req, res, url.pathname) : page(res, url.pathname)).catch((error: unknown) => {
      if (error instanceof ClientAborted) {
        log(`console: ${req.method} ${url.pathname} aborted by the client before its body was complete`);
        return;
      }
      log(`console: ${req.method} ${url.pathname} failed: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) refuse(req, res, { status: 500, code: 'internal_error', message: 'console error; it has been logged' }, isApi);
      else res.destroy();
    });
  };
  // A failed handshake (plain HTTP sent to the TLS port, a client that distrusts the certificate)
  // only closes that connection: Node emits tlsClientError and destroys the socket.
  return options.tls ? createTlsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, handle) : createServer(serverOptions, handle);
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import type { ConsoleHandlers } from '../../shared/console-api.ts';
import { dispatch } from './handlers.ts';
import type { EventBus } from './events.ts';

export interface ConsoleServerOptions {
  /** Folder of the built renderer (electron-vite's out/renderer). */
  rendererDir: string;
  token: string;
  handlers: ConsoleHandlers;
  events: EventBus;
}

const MAX_API_BODY = 1024 * 1024;

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_API_BODY) req.destroy(new Error('request too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? (JSON.parse(text) as unknown) : {});
      } catch {
        reject(new Error('body is not JSON'));
      }
    });
    req.on('error', reject);
  });
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

const LOOPBACK_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

function tokenOf(req: IncomingMessage, url: URL): string | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7);
  const cookie = /(?:^|;\s*)sb_console=([^;]+)/.exec(req.headers.cookie ?? '');
  if (cookie) return decodeURIComponent(cookie[1]!);
  return url.searchParams.get('token');
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

/**
 * The headless console listener: loopback only, a token from the printed URL (kept in an
 * HttpOnly cookie afterwards), and a Host check so a DNS-rebinding page cannot reach it.
 */
export function createConsoleServer(options: ConsoleServerOptions): Server {
  return createServer((req, res) => {
    void (async () => {
      if (!LOOPBACK_HOST.test(req.headers.host ?? '')) return plain(res, 421, 'console answers only to a loopback Host name');
      const url = new URL(req.url ?? '/', 'http://localhost');
      const given = tokenOf(req, url);
      if (given === null || !sameToken(given, options.token)) return plain(res, 401, 'console token missing or wrong: open the URL that serve printed');
      const headers: Record<string, string> = {
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'content-security-policy': "default-src 'self'; img-src 'self' data: https: http:; media-src 'self' https: http: data:; connect-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
      };
      if (url.searchParams.has('token')) headers['set-cookie'] = `sb_console=${encodeURIComponent(options.token)}; HttpOnly; SameSite=Strict; Path=/`;
      if (url.pathname === '/api/events') {
        // Server-sent events: one stream per open console, a comment every 15 s keeps it open.
        res.writeHead(200, { ...headers, 'content-type': 'text/event-stream', connection: 'keep-alive' });
        res.write(': connected\n\n');
        const unsubscribe = options.events.subscribe((event) => res.write(`data: ${JSON.stringify(event)}\n\n`));
        const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
        req.on('close', () => {
          clearInterval(ping);
          unsubscribe();
        });
        return;
      }
      if (url.pathname.startsWith('/api/')) {
        if (req.method !== 'POST') return plain(res, 405, 'console API methods are called with POST', { ...headers, allow: 'POST' });
        let input: unknown;
        try {
          input = await readJson(req);
        } catch (error) {
          res.writeHead(400, { ...headers, 'content-type': 'application/json' });
          return res.end(JSON.stringify({ ok: false, error: { code: 'invalid_input', message: (error as Error).message } }));
        }
        const result = await dispatch(options.handlers, url.pathname.slice(5), input);
        const status = result.ok ? 200 : result.error.code === 'unknown_method' || result.error.code === 'not_found' ? 404 : result.error.code === 'internal_error' ? 500 : 400;
        res.writeHead(status, { ...headers, 'content-type': 'application/json' });
        return res.end(JSON.stringify(result));
      }
      const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname.slice(1));
      const file = normalize(join(options.rendererDir, rel));
      if (!file.startsWith(normalize(options.rendererDir) + sep) || !existsSync(file)) {
        if (!existsSync(join(options.rendererDir, 'index.html'))) return plain(res, 503, 'console is not built yet: run `npm run build`', headers);
        return plain(res, 404, 'not found', headers);
      }
      res.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(await readFile(file));
    })().catch(() => {
      if (!res.headersSent) plain(res, 500, 'console error');
    });
  });
}

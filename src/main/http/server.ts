import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import type { RequestLogEntry } from '../store/request-log.ts';
import { newId } from '../store/ids.ts';
import { ClientGone, DEFAULT_LINGER, discardRestOfBody, readBody, type CloseAfter, type LingerBounds } from './body.ts';
import { DEFAULT_JSON_BOUNDS, type JsonBounds } from './json-scan.ts';
import type { IntakeBudget } from './intake-budget.ts';
import { admitBody, tooManyConnections, watchConnections } from './body-admission.ts';
import { answerClientError, reportOnce, throttledLog } from './client-error.ts';
import { HttpProblem } from './problem.ts';
import type { ChatMessagesHandler, Reply, RequestFacts } from './chat-messages.ts';
import { chatLogEntry } from './request-logger.ts';
import type { Metrics } from './metrics.ts';
import { isProbePath, probeReply, type Readiness } from './probes.ts';
import type { PreAuthGate } from '../auth/address-limiter.ts';
import type { TurnSlicer } from '../loop/turn-slicer.ts';
import { idleWaiters } from '../loop/quiesce.ts';

export const CHAT_PATH = '/custom-im/chat-messages';

export interface HttpServerDeps {
  chatMessages: ChatMessagesHandler;
  metrics: Metrics;
  clock: Clock;
  bodyLimitBytes: number;
  /** Per-address limit on requests refused before or at authentication (absent: no limit). */
  preAuthGate?: PreAuthGate;
  /** Bytes and connections that requests not yet authenticated may hold (absent: no bound). */
  intake?: IntakeBudget;
  /** Depth, items and name lengths a body may have, checked as it arrives. */
  jsonBounds?: JsonBounds;
  logRequest: (entry: RequestLogEntry, authenticated: boolean) => void;
  logError: (error: unknown, requestId: string) => void;
  /** One line, no stack: clients that go away or send malformed HTTP. */
  logInfo: (line: string) => void;
  /** Bounds of the lingering close after a refused body (section 1); 64 MiB or 10 s by default. */
  linger?: LingerBounds;
  /**
   * Runs each chat message's handling (authentication, validation, the hand-over to the writer)
   * in budgeted slices instead of where its body was read (absent: at once). Node handles every
   * socket a poll finds readable in one turn: at 100 connections that was 25–40 ms of handling
   * with the loop unable to fire a timer, send a delivery or answer the console.
   */
  slicer?: TurnSlicer;
  /** What /readyz asks (absent: ready while the server runs). */
  ready?: Readiness;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@\-]{1,128}$/;

function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : newId('request');
}

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [type, ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

export interface HttpServer {
  server: Server;
  /** Requests being processed now; shutdown waits for them. */
  inFlight(): number;
  /** Resolves when the next request in flight ends; for `RunningService.quiesce`. */
  requestEnded(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish, then resolves. */
  close(): Promise<void>;
}

/** The small HTTP core: routing, request ids, body limits and problem+json for every refusal. */
/** Listens on `port` and `host`; rejects with the listen error (EADDRINUSE …) instead of an unheard 'error' event. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export function createHttpServer(deps: HttpServerDeps): HttpServer {
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | null = null;
  const ended = idleWaiters();
  const linger = deps.linger ?? DEFAULT_LINGER;
  const logInfo = throttledLog(deps.logInfo, deps.clock);
  /** Refused connections still reading a client's rest; shutdown does not wait for them. */
  const lingering = new Set<Socket>();
  const track = (socket: Socket): void => {
    if (socket.destroyed || lingering.has(socket)) return;
    lingering.add(socket);
    socket.once('close', () => lingering.delete(socket));
  };

  function send(req: IncomingMessage, res: ServerResponse, requestId: string, reply: Reply, closeAfter: CloseAfter = false): void {
    const payload = 'text' in reply ? reply.text : 'json' in reply ? reply.json : JSON.stringify(reply.body);
    const headers: Record<string, string | number> = {
      'content-type':
        reply.status >= 400 ? 'application/problem+json' : 'text' in reply ? 'text/plain; version=0.0.4; charset=utf-8' : 'application/json',
      'content-length': Buffer.byteLength(payload),
      'x-request-id': requestId,
      'cache-control': 'no-store',
      ...reply.headers,
    };
    if (closeAfter || closing) headers['connection'] = 'close';
    if (closeAfter === 'linger') {
      track(req.socket);
      discardRestOfBody(req, linger, deps.clock);
    } else if (closeAfter === 'brief') {
      // Nothing more is read: Node closes once the answer is out (a reset, if the client is still sending).
      req.pause();
    }
    res.writeHead(reply.status, headers);
    res.end(req.method === 'HEAD' ? undefined : payload);
  }

  function problemReply(p: HttpProblem, requestId: string): Reply {
    return { status: p.status, body: p.body(requestId), headers: p.headers };
  }

  /** 429 for an address whose failures before authentication used up its tokens. */
  function gatedReply(retryAfterSeconds: number, requestId: string): Reply {
    const detail = `too many requests from this address failed authentication; retry in ${retryAfterSeconds} s`;
    const headers = { 'retry-after': String(retryAfterSeconds) };
    return problemReply(new HttpProblem('rate_limited', detail, { headers, extra: { retry_after: retryAfterSeconds } }), requestId);
  }

  /**
   * Runs the chat handler now, or as a task of the ingest slicer. A queued request is looked at
   * again when its turn comes: a client that went away meanwhile costs nothing more, and its
   * address is asked again at the gate, whose charges for the requests of earlier slices are in
   * by then (admitted together, they would otherwise all be parsed and checked).
   */
  function runChat(req: IncomingMessage, requestId: string, body: Buffer, facts: RequestFacts): Promise<Reply | { gated: number }> {
    const slicer = deps.slicer;
    if (!slicer) return deps.chatMessages(requestId, body, facts);
    return new Promise((resolve, reject) =>
      slicer.run(() => {
        try {
          if (req.socket.destroyed) throw new ClientGone(body.length);
          const admission = deps.preAuthGate?.admit(req.socket, req.socket.remoteAddress, deps.clock.now());
          if (admission && !admission.allowed) return resolve({ gated: admission.retryAfterSeconds });
          deps.chatMessages(requestId, body, facts).then(resolve, reject);
        } catch (error) {
          reject(error); // thrown before its first await: still this request's answer
        }
      }),
    );
  }

  async function handleChat(
    req: IncomingMessage,
    requestId: string,
    facts: RequestFacts,
  ): Promise<{ reply: Reply; closeAfter: CloseAfter; gated?: boolean; bodyRead?: number }> {
    if (!isJson(req.headers['content-type'])) {
      return {
        reply: problemReply(new HttpProblem('unsupported_media_type', 'Content-Type must be application/json (charset=utf-8 optional)'), requestId),
        closeAfter: req.headers['content-length'] !== '0' && 'linger',
      };
    }
    const admission = admitBody(req, { bounds: deps.jsonBounds ?? DEFAULT_JSON_BOUNDS, bodyLimitBytes: deps.bodyLimitBytes, clock: deps.clock, intake: deps.intake, gate: deps.preAuthGate });
    // Refused before a byte of the body is read: not charged to the address as a failure.
    if (admission instanceof HttpProblem) return { reply: problemReply(admission, requestId), closeAfter: 'brief', gated: true };
    try {
      let body: Buffer;
      try {
        body = await readBody(req, deps.bodyLimitBytes, admission.read);
      } catch (error) {
        // An honest mistake (a body too large) is read on so the client gets its 413; a hostile-looking one is not.
        if (error instanceof HttpProblem) return { reply: problemReply(error, requestId), closeAfter: error.code === 'payload_too_large' ? 'linger' : 'brief' };
        throw error;
      }
      const bodyRead = body.length;
      try {
        const handled = await runChat(req, requestId, body, facts);
        if ('gated' in handled) return { reply: gatedReply(handled.gated, requestId), closeAfter: false, gated: true };
        return { reply: handled, closeAfter: false, bodyRead };
      } catch (error) {
        if (error instanceof HttpProblem) return { reply: problemReply(error, requestId), closeAfter: false, bodyRead };
        throw error;
      }
    } finally {
      admission.release();
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const requestId = requestIdOf(req);
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const method = req.method ?? 'GET';
    const facts: RequestFacts = { clientId: null, eventType: null, msgId: null, conversationId: null, replayed: false };
    let reply: Reply;
    let closeAfter: CloseAfter = false;
    let gated = false;
    let bodyRead = 0;
    const settleGate = (refused: boolean, read: number): void => {
      const declared = Number(req.headers['content-length']);
      // What it sent, or what it declared: the work it set out to cost us.
      const bodyBytes = Math.max(read, Number.isSafeInteger(declared) ? declared : 0);
      deps.preAuthGate?.settle(req.socket, req.socket.remoteAddress, { authenticated: facts.authenticated === true, refused, bodyBytes }, deps.clock.now());
    };
    try {
      if (crowded.has(req.socket)) {
        reply = problemReply(tooManyConnections(deps.intake!.limits.perAddressConnections), requestId);
        closeAfter = 'brief';
      } else if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        // Node's own answer here is a bare 400 (requireHostHeader): malformed HTTP gets problem+json (section 1).
        reply = problemReply(new HttpProblem('bad_request', 'the request is not valid HTTP/1.1: it has no Host header'), requestId);
        closeAfter = 'linger';
      } else if (path === CHAT_PATH) {
        if (method !== 'POST') {
          reply = problemReply(new HttpProblem('method_not_allowed', `${method} is not allowed on ${CHAT_PATH}; use POST`, { headers: { allow: 'POST' } }), requestId);
        } else {
          // Before the body is read: an address that keeps failing authentication costs no parsing.
          const admission = deps.preAuthGate?.admit(req.socket, req.socket.remoteAddress, deps.clock.now()) ?? { allowed: true };
          if (admission.allowed) ({ reply, closeAfter, gated = false, bodyRead = 0 } = await handleChat(req, requestId, facts));
          else {
            gated = true;
            reply = gatedReply(admission.retryAfterSeconds, requestId);
            // Node discards a small unread body and keeps the connection; a large or unknown one is not worth reading.
            closeAfter = !(Number(req.headers['content-length']) <= 65_536) && 'brief';
          }
        }
      } else if (isProbePath(path)) {
        if (method !== 'GET' && method !== 'HEAD') {
          reply = problemReply(new HttpProblem('method_not_allowed', `${method} is not allowed on ${path}; use GET`, { headers: { allow: 'GET, HEAD' } }), requestId);
        } else {
          const answer = await probeReply(path, deps);
          reply = answer instanceof HttpProblem ? problemReply(answer, requestId) : answer;
        }
      } else {
        reply = problemReply(new HttpProblem('not_found', `no such path: ${path.slice(0, 200)}`), requestId);
      }
    } catch (error) {
      if (error instanceof ClientGone) {
        // A stranger that walks away mid-body is charged like a refusal, or it could hold and drop bodies for free.
        if (path === CHAT_PATH && facts.authenticated !== true) settleGate(true, error.bytesReceived);
        reportOnce(req.socket, `request ${requestId} from ${req.socket.remoteAddress ?? '?'}: ${error.message}`, logInfo);
        return;
      }
      deps.logError(error, requestId);
      reply = problemReply(new HttpProblem('internal_error', 'the server failed to process this request; it has been logged'), requestId);
    }
    if (path === CHAT_PATH && !gated) settleGate(reply.status >= 400, bodyRead);
    if (res.destroyed || req.socket.destroyed) return;
    send(req, res, requestId, reply, closeAfter);

    const latencyMs = performance.now() - started;
    if (path === CHAT_PATH) {
      deps.metrics.observeRequest(facts.eventType, reply.status, latencyMs / 1000);
      const { entry, authenticated } = chatLogEntry({ at: deps.clock.now(), requestId, method, path, facts, reply, latencyMs, remote: req.socket.remoteAddress });
      deps.logRequest(entry, authenticated);
    }
  }

  const server = createServer({ requestTimeout: 60_000, headersTimeout: 30_000, requireHostHeader: false }, (req, res) => {
    inFlight++;
    route(req, res)
      .catch((error: unknown) => {
        deps.logError(error, 'unknown');
        if (!res.headersSent) res.destroy();
      })
      .finally(() => {
        inFlight--;
        ended.release();
        if (closing && inFlight === 0 && drained) drained();
      });
  });
  /** Connections past their address's cap: answered 429 and closed at their first request. */
  const crowded = deps.intake ? watchConnections(server, deps.intake) : new WeakSet<Socket>();
  server.on('clientError', (error, socket) => {
    // Malformed HTTP never reaches a handler: answered here, as problem+json where still possible.
    answerClientError(error, socket as Socket, { clock: deps.clock, linger, log: logInfo });
    track(socket as Socket);
  });

  return {
    server,
    inFlight: () => inFlight,
    requestEnded: () => ended.wait(),
    close() {
      closing = true;
      // Their answers are out already; a lingering close must not hold up shutdown.
      for (const socket of lingering) socket.destroy();
      // No new connections from now on: clients that reconnect at once would otherwise keep a
      // request always in flight (queued in the slicer, say), and the drain below would never end.
      return new Promise((resolve) => {
        let answered = false;
        let disconnected = false;
        const done = (): void => {
          if (answered && disconnected) resolve();
        };
        // Called once every connection has ended: after their answers, idle ones closed below.
        server.close(() => {
          disconnected = true;
          done();
        });
        const finish = (): void => {
          answered = true;
          server.closeIdleConnections();
          done();
        };
        if (inFlight === 0) finish();
        else drained = finish;
        server.closeIdleConnections();
      });
    },
  };
}

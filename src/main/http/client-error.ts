import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import { newId } from '../store/ids.ts';
import { HttpProblem } from './problem.ts';
import { armLinger, lingerCheck, type LingerBounds } from './body.ts';

/** Connections whose trouble was already logged: one line per incident, whoever sees it first. */
const reported = new WeakSet<object>();

/**
 * At most `max` lines per `windowMs` through `log`; the rest are counted and said in one line when
 * the next window opens. Each client that walks away or sends malformed HTTP is one info line: a
 * flood of them wrote 16,000 lines to stderr in a minute, unthrottled.
 */
export function throttledLog(log: (line: string) => void, clock: Clock, max = 20, windowMs = 10_000): (line: string) => void {
  let windowStart = -Infinity;
  let written = 0;
  let dropped = 0;
  return (line) => {
    const now = clock.now();
    if (now - windowStart >= windowMs) {
      if (dropped > 0) log(`… and ${dropped} more such line${dropped === 1 ? '' : 's'} in the ${windowMs / 1000} s before, not written`);
      windowStart = now;
      written = 0;
      dropped = 0;
    }
    if (written < max) {
      written++;
      log(line);
    } else dropped++;
  };
}

export function reportOnce(socket: object, line: string, log: (line: string) => void): void {
  if (reported.has(socket)) return;
  reported.add(socket);
  log(line);
}

/** What Node's parser (llhttp) refused, as the problem the client gets; null: nothing to answer. */
export function clientErrorProblem(error: NodeJS.ErrnoException & { reason?: string }): HttpProblem | null {
  const code = error.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new HttpProblem('headers_too_large', `the request line and headers exceed ${maxHeaderSize} bytes`);
  }
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    return new HttpProblem('payload_too_large', 'the chunk extensions of the body are too large');
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new HttpProblem('request_timeout', 'the request was not received completely in time');
  }
  if (code.startsWith('HPE_')) {
    return new HttpProblem('bad_request', `the request is not valid HTTP/1.1: ${error.reason ?? error.message} (${code})`);
  }
  return null; // a reset or a broken pipe: the client is gone
}

function rawResponse(problem: HttpProblem, requestId: string): string {
  const body = JSON.stringify(problem.body(requestId));
  return (
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** An answer is still possible: the socket is open and no response to this request has begun. */
function canAnswer(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  return socket.writable && !current?.headersSent;
}

/**
 * The server's `clientError` handler: malformed HTTP gets a problem+json answer where one can still
 * be sent, then a lingering close (the client may still be writing); one info line in the log.
 */
export function answerClientError(
  error: NodeJS.ErrnoException & { reason?: string },
  socket: Socket,
  deps: { clock: Clock; linger: LingerBounds; log: (line: string) => void },
): void {
  const check = lingerCheck(socket);
  if (check) {
    // The answer is out and the client's rest is being discarded: the parser keeps refusing it.
    check();
    return;
  }
  const who = socket.remoteAddress ?? 'a client';
  const problem = clientErrorProblem(error);
  if (!canAnswer(socket)) {
    socket.destroy(); // a response to this request has begun, or the socket is gone
    return;
  }
  if (error.code === 'HPE_INVALID_EOF_STATE') {
    reportOnce(socket, `${who} closed the connection in the middle of a request`, deps.log);
    socket.destroy();
    return;
  }
  if (!problem) {
    socket.destroy(); // a reset: the request handler, if one was running, reports it
    return;
  }
  const requestId = newId('request');
  socket.end(rawResponse(problem, requestId));
  // What the client still sends is read and dropped within the bounds (the parser refuses it again).
  socket.on('data', armLinger(socket, deps.linger, deps.clock));
  socket.on('end', () => socket.destroy());
  socket.resume();
  reportOnce(
    socket,
    `malformed HTTP from ${who}: ${error.code} (${error.reason ?? error.message}); answered ${problem.status} ${problem.code}, request ${requestId}`,
    deps.log,
  );
}

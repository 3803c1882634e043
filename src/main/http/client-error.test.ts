import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientErrorProblem } from './client-error.ts';

const error = (code: string, reason?: string): NodeJS.ErrnoException & { reason?: string } =>
  Object.assign(new Error(`Parse Error: ${reason ?? code}`), { code, ...(reason ? { reason } : {}) });

test('each refusal of the HTTP parser maps to the problem the client gets', () => {
  const table: Array<[string, number | null, string | null]> = [
    ['HPE_HEADER_OVERFLOW', 431, 'headers_too_large'],
    ['HPE_INVALID_METHOD', 400, 'bad_request'],
    ['HPE_INVALID_CHUNK_SIZE', 400, 'bad_request'],
    ['HPE_INVALID_HEADER_TOKEN', 400, 'bad_request'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 400, 'bad_request'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413, 'payload_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['ECONNRESET', null, null],
    ['EPIPE', null, null],
  ];
  for (const [code, status, problem] of table) {
    const p = clientErrorProblem(error(code));
    assert.equal(p?.status ?? null, status, code);
    assert.equal(p?.code ?? null, problem, code);
  }
});

test('the parser\'s reason is named in the detail, never anything the client sent', () => {
  const p = clientErrorProblem(error('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size'));
  assert.equal(p?.message, 'the request is not valid HTTP/1.1: Invalid character in chunk size (HPE_INVALID_CHUNK_SIZE)');
});

test('info lines about clients are throttled: 20 per 10 s, the rest counted in one line when the next window opens', async () => {
  const { throttledLog } = await import('./client-error.ts');
  const { manualClock } = await import('../../shared/clock.ts');
  const clock = manualClock(0);
  const lines: string[] = [];
  const log = throttledLog((l) => lines.push(l), clock);
  for (let i = 0; i < 1000; i++) log(`client ${i} went away`);
  assert.equal(lines.length, 20);
  clock.advance(10_000);
  log('one more');
  assert.deepEqual(lines.slice(20), ['… and 980 more such lines in the 10 s before, not written', 'one more']);
});

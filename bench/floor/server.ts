import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../../src/main/auth/canonical-json.ts';

/**
 * The floor: the least a server can do and still keep the protocol's promise for a website_dialog
 * message. It parses the envelope, canonicalizes message_info (the product's JCS), checks the HMAC,
 * hashes the content, and answers 200 once a writer thread has committed the question and an
 * answer (WAL, synchronous=FULL, commits grouped per turn) with or without a trigram search index.
 * No validation, no engine, no idempotency, no request log, no console: a lower bound, not a rival.
 * FLOOR_INDEX: none | automerge (FTS5's default) | paced (Switchboard's merge steps, migration 20).
 */
const secret = createSecretKey(Buffer.from(process.env['FLOOR_SECRET'] ?? '', 'utf8'));
const writer = new Worker(new URL('./writer.ts', import.meta.url), {
  workerData: { path: process.argv[2], index: process.env['FLOOR_INDEX'] ?? 'none' },
});
type Job = { id: number; peer: string; msgId: string; content: string; hash: string };
const waiting = new Map<number, (ok: boolean) => void>();
const answerAll = (ids: Iterable<number>, ok: boolean): void => {
  for (const id of [...ids]) {
    waiting.get(id)?.(ok);
    waiting.delete(id);
  }
};
let batch: Job[] = [];
let nextId = 0;

writer.on('message', (msg: { ok: number[] } | { failed: number[]; error: string }) => {
  if ('ok' in msg) return answerAll(msg.ok, true);
  console.error(`floor writer: ${msg.error}`);
  answerAll(msg.failed, false);
});
writer.on('exit', (code) => {
  console.error(`floor writer exited with code ${code}`);
  answerAll(waiting.keys(), false);
  process.exit(1);
});
const flush = (): void => {
  writer.postMessage(batch);
  batch = [];
};

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const answer = (status: number, body: object): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    try {
      const env = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { client: string; signature: string; timestamp: number; message_info: Record<string, unknown> };
      const canonical = canonicalJson(env.message_info);
      const expected = createHmac('sha256', secret).update(`${env.timestamp}.${env.client}.${canonical}`).digest();
      const given = Buffer.from(env.signature, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return answer(401, { code: 'invalid_signature' });
      const id = nextId++;
      waiting.set(id, (ok) => (ok ? answer(200, { code: 0, msg: 'ok', data: { msg_id: env.message_info['msg_id'] } }) : answer(500, { code: 'internal_error' })));
      if (batch.length === 0) setImmediate(flush);
      batch.push({
        id,
        peer: String(env.message_info['from_user_id']),
        msgId: String(env.message_info['msg_id']),
        content: String(env.message_info['content']),
        hash: createHash('sha256').update(canonical).digest('hex'),
      });
    } catch {
      answer(400, { code: 'invalid_json' });
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`endpoint: http://127.0.0.1:${(server.address() as AddressInfo).port}/custom-im/chat-messages`));
process.on('SIGTERM', () => server.close(() => {
  writer.removeAllListeners('exit');
  void writer.terminate().then(() => process.exit(0));
}));

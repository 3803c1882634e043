import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { untilReady } from './worker-ready.ts';

const thread = (code: string): Worker => new Worker(code, { eval: true });

test('resolves on the ready message, whatever came before it', async () => {
  const w = thread("const { parentPort } = require('node:worker_threads'); parentPort.postMessage({ type: 'hello' }); parentPort.postMessage({ type: 'ready' });");
  await untilReady(w, 'test thread');
  await w.terminate();
});

test('a thread that exits before it is ready rejects, naming it (it never hangs start-up)', async () => {
  await assert.rejects(untilReady(thread('process.exit(3)'), 'test thread'), /test thread exited with code 3 before it was ready/);
});

test('a thread that throws while starting rejects with its error', async () => {
  await assert.rejects(untilReady(thread("throw new Error('cannot open the database')"), 'test thread'), /cannot open the database/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { MAIN_V8_FLAGS, WORKER_RESOURCE_LIMITS } from './runtime-flags.ts';

test('npm run serve starts the service with the heap bounds the launcher uses', () => {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;
  for (const flag of MAIN_V8_FLAGS) assert.ok(scripts['serve']!.includes(`node ${flag} src/main/headless.ts`), `serve script has ${flag}`);
  const launcher = readFileSync(new URL('./launcher.ts', import.meta.url), 'utf8');
  assert.match(launcher, /--js-flags=\$\{MAIN_V8_FLAGS/);
  assert.match(launcher, /\.\.\.MAIN_V8_FLAGS, 'src\/main\/headless\.ts'/);
});

test('a thread started with WORKER_RESOURCE_LIMITS gets them (the writer, engine and read threads pass them)', async () => {
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage(require('node:worker_threads').resourceLimits)", {
    eval: true,
    resourceLimits: WORKER_RESOURCE_LIMITS,
  });
  const [limits] = (await new Promise((resolve) => worker.once('message', (m) => resolve([m])))) as [{ maxYoungGenerationSizeMb: number }];
  await worker.terminate();
  assert.equal(limits.maxYoungGenerationSizeMb, WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb);
  for (const file of ['./store/worker-writer.ts', './store/worker-reader.ts', './engines/worker-engine.ts']) {
    assert.match(readFileSync(new URL(file, import.meta.url), 'utf8'), /new Worker\(entry, \{ workerData, resourceLimits: WORKER_RESOURCE_LIMITS \}\)/, file);
  }
});

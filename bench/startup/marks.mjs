import { createRequire, syncBuiltinESMExports } from 'node:module';
import { isMainThread, threadId } from 'node:worker_threads';

/**
 * Preloaded with `--import` into the server (bench/startup/run.ts), and by Node's default into each
 * of its worker threads: prints `STARTUP_MARK <thread> <what> <epoch ms>` lines to stderr at each
 * start-up step, without touching the service's code. Builtins' named exports are patched in place
 * (syncBuiltinESMExports), so `import { Worker } from 'node:worker_threads'` in the service sees
 * the counting versions. Plain JavaScript, so that loading it costs no type stripping.
 */
const require = createRequire(import.meta.url);
const thread = isMainThread ? 'main' : `worker-${threadId}`;
const now = () => performance.timeOrigin + performance.now();
/** @param {string} what @param {number} [at] */
const mark = (what, at = now()) => void process.stderr.write(`STARTUP_MARK ${thread} ${what} ${at.toFixed(1)}\n`);

// performance.timeOrigin is when the process started (worker threads share it).
if (isMainThread) mark('process start', performance.timeOrigin);
mark('preload');

/** @type {typeof import('node:sqlite')} */
const sqlite = require('node:sqlite');
const OriginalDb = sqlite.DatabaseSync;
let opened = 0;
sqlite.DatabaseSync = class extends OriginalDb {
  /** @param {any[]} args */
  constructor(...args) {
    if (opened++ === 0) mark('first database open');
    super(...args);
  }
};

if (isMainThread) {
  /** @type {typeof import('node:worker_threads')} */
  const wt = require('node:worker_threads');
  const OriginalWorker = wt.Worker;
  wt.Worker = class extends OriginalWorker {
    /** @param {string | URL} entry @param {import('node:worker_threads').WorkerOptions} [options] */
    constructor(entry, options) {
      const name = String(entry).split('/').pop()?.replace(/\.ts$/, '') ?? 'worker';
      mark(`${name} created`);
      super(entry, options);
      this.once('online', () => mark(`${name} online`));
      /** @param {{ type?: string }} msg */
      const onMessage = (msg) => {
        if (msg?.type !== 'ready') return;
        mark(`${name} ready`);
        this.off('message', onMessage);
      };
      this.on('message', onMessage);
    }
  };

  /** @type {typeof import('node:net')} */
  const net = require('node:net');
  const listen = net.Server.prototype.listen;
  /** @this {import('node:net').Server} @param {any[]} args */
  net.Server.prototype.listen = function (...args) {
    mark('listen called');
    this.once('listening', () => mark('listening'));
    return listen.apply(this, args);
  };
}
syncBuiltinESMExports();

import { Agent, request } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { hashPassword, verifyPassword } from '../../src/main/accounts/passwords.ts';
import { percentile } from '../lib.ts';
import { rssBytes, scrapeMetrics, type Serve } from '../hostile/serve.ts';
import type { Spread } from './messages.ts';

/**
 * bench/team's sign-in cost: what one scrypt (src/main/accounts/passwords.ts, N = 2^15, r = 8,
 * p = 1) takes on this machine, and what 20 sign-ins arriving at once do to serve's main thread.
 * scrypt runs on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), so the
 * loop is not blocked by it; the question is whether the pool's threads, on two cores, starve the
 * main thread of CPU.
 */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function spread(values: number[]): Spread {
  const s = Float64Array.from(values).sort();
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s.length ? s[s.length - 1]! : NaN };
}

/** One hash at a time in this process (the pool otherwise idle): scrypt's own time per sign-in. */
export async function scryptAlone(runs: number): Promise<{ hash: Spread; verify: Spread }> {
  const password = 'correct horse battery staple';
  const stored = await hashPassword(password); // warm-up, and the hash verify checks
  const hash: number[] = [];
  const verify: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    await hashPassword(password);
    hash.push(performance.now() - t);
    t = performance.now();
    if (!(await verifyPassword(stored, password))) throw new Error('scrypt: the password did not verify');
    verify.push(performance.now() - t);
  }
  return { hash: spread(hash), verify: spread(verify) };
}

/**
 * The control for the bursts: `count` hashes arriving at once in this process, nothing else on its
 * loop, with a 10 ms timer measuring the loop as serve's does; at most `atOnce` run at a time
 * (the rest wait their turn), Infinity as passwords.ts runs them (the pool takes 4). What the
 * hashing alone does to an event loop on this machine, and what a queue in front of it would.
 */
export async function scryptBurstAlone(count: number, atOnce: number): Promise<ScryptBurst> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const rss0 = process.memoryUsage.rss();
  let rssPeak = rss0;
  const rss = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 10);
  const t0 = performance.now();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      await hashPassword('correct horse battery staple');
    }
  };
  await Promise.all(Array.from({ length: Math.min(count, atOnce) }, lane));
  const ms = performance.now() - t0;
  loop.disable();
  clearInterval(rss);
  return { atOnce, ms, rssGrowth: rssPeak - rss0, loopP99: Math.max(0, loop.percentile(99) / 1e6 - 10), loopMax: Math.max(0, loop.max / 1e6 - 10) };
}

export interface ScryptBurst {
  atOnce: number;
  /** Until the last hash was done. */
  ms: number;
  /** This process's RSS, peak − before (bytes): scrypt's 32 MiB per hash running. */
  rssGrowth: number;
  loopP99: number;
  loopMax: number;
}

/** POST /api/auth/<route> on the console listener, as the sign-in page calls it. */
export function authCall(serve: Serve, route: string, input: unknown, agent?: Agent): Promise<{ status: number; body: unknown; ms: number }> {
  const body = Buffer.from(JSON.stringify(input));
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${serve.consoleOrigin}/api/auth/${route}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface BurstFigures {
  /** Each sign-in's answer time, and the last one's (the burst's length). */
  answer: Spread;
  /** serve's /metrics event-loop delay over the window (ms beyond the 10 ms tick). */
  loopP99: number;
  loopMax: number;
  /** GET /healthz on the endpoint every 10 ms during the window: what a message arriving then waits. */
  healthz: Spread;
  rssPeak: number;
  failed: number;
}

/** A window of `ms` with a /healthz probe and an RSS sampler, around `work` (none: the idle baseline). */
async function window(serve: Serve, ms: number, work: (() => Promise<number[]>) | null): Promise<BurstFigures & { answers: number[] }> {
  await scrapeMetrics(serve.origin); // resets the event-loop delay window
  let rssPeak = rssBytes(serve.pid);
  const rss = setInterval(() => (rssPeak = Math.max(rssPeak, rssBytes(serve.pid))), 20);
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const probes: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        const req = request(`${serve.origin}/healthz`, { agent: probeAgent }, (res) => res.resume().on('end', resolve));
        req.on('error', () => resolve());
        req.end();
      });
      probes.push(performance.now() - t0);
      await sleep(10);
    }
  })();
  const started = performance.now();
  const answers = work ? await work() : [];
  await sleep(Math.max(0, ms - (performance.now() - started)));
  probing = false;
  await probe;
  clearInterval(rss);
  probeAgent.destroy();
  const m = await scrapeMetrics(serve.origin);
  const loop = (k: string): number => (m.get(`switchboard_event_loop_delay_${k}_seconds`) ?? NaN) * 1000;
  return { answers, answer: spread(answers), loopP99: loop('p99'), loopMax: loop('max'), healthz: spread(probes), rssPeak, failed: 0 };
}

/**
 * `count` agents sign in with their passwords at the same moment (one connection each), `bursts`
 * times, alternating with idle windows of the same length (the baseline).
 */
export async function signInBursts(serve: Serve, agents: Array<{ id: string; password: string }>, count: number, bursts: number): Promise<{ burst: BurstFigures[]; idle: BurstFigures[] }> {
  const burst: BurstFigures[] = [];
  const idle: BurstFigures[] = [];
  const who = agents.slice(0, count);
  for (let b = 0; b < bursts; b++) {
    let failed = 0;
    const work = async (): Promise<number[]> => {
      const answers = await Promise.all(who.map((a) => authCall(serve, 'signIn', { id: a.id, password: a.password })));
      failed = answers.filter((a) => a.status !== 200).length;
      return answers.map((a) => a.ms);
    };
    // Long enough to hold the burst (20 hashes on a 4-thread pool) with room after it.
    const ms = 2500;
    const i = await window(serve, ms, null);
    const w = await window(serve, ms, work);
    idle.push(i);
    burst.push({ ...w, failed });
    await sleep(500);
  }
  return { burst, idle };
}

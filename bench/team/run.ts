import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliOk as cli, ROOT, runWrk, signedBodies, startCountingReceiver, startTarget, type Target, type WrkResult } from '../lib.ts';
import { knowledgeBase, kbQuestion } from '../kb-data.ts';
import { drainBacklog, cpuTimes, stealShare } from '../ingest.ts';
import { cpuMs } from '../floor/run.ts';
import { sampleRss, scrapeMetrics, startServe, type Serve } from '../hostile/serve.ts';
import { createStore } from '../../src/main/store/index.ts';
import { openDatabase } from '../../src/main/store/db.ts';
import { databasePath } from '../../src/main/store/data-dir.ts';
import { digestOf, newSecret, SIGN_IN_LINK_MS } from '../../src/main/accounts/sessions.ts';
import type { ConsolesCommand, ConsolesReply, DriverCommand, DriverReply, FanOut } from './messages.ts';
import { authCall, scryptAlone, scryptBurstAlone, signInBursts, type ScryptBurst } from './sign-in.ts';
import { report, type Death, type Phase } from './report.ts';

/**
 * bench/team (issue 28): 50 signed-in consoles on the event stream while signed ingest runs at
 * half the floor's rate, against the same ingest with no console, alternating in one run; then
 * the cost of signing in. See bench/README.md.
 */
const SECONDS = Number(process.env['BENCH_TEAM_SECONDS'] ?? 8);
const ROUNDS = Number(process.env['BENCH_TEAM_ROUNDS'] ?? 3);
const CONSOLES = Number(process.env['BENCH_TEAM_CONSOLES'] ?? 50);
// The share of the floor's req/s the ingest runs at, or an absolute rate that replaces it.
const SHARE = Number(process.env['BENCH_TEAM_SHARE'] ?? 0.5);
const FIXED_RATE = process.env['BENCH_TEAM_RATE'] ? Number(process.env['BENCH_TEAM_RATE']) : null;
const FLOOR_CONNECTIONS = Number(process.env['BENCH_TEAM_FLOOR_CONNECTIONS'] ?? 100);
const FLOOR_SECONDS = Number(process.env['BENCH_FLOOR_SECONDS'] ?? 4);
const SOCKETS = Number(process.env['BENCH_TEAM_SOCKETS'] ?? 64);
const SIGN_INS = Number(process.env['BENCH_TEAM_SIGN_INS'] ?? 20);
const BURSTS = Number(process.env['BENCH_TEAM_BURSTS'] ?? 3);
const SCRYPT_RUNS = Number(process.env['BENCH_TEAM_SCRYPT_RUNS'] ?? 10);
// fan-out or sign-in: one half of the bench alone.
const ONLY = process.env['BENCH_TEAM_ONLY'] ?? '';
if (!['', 'fan-out', 'sign-in'].includes(ONLY)) throw new Error(`BENCH_TEAM_ONLY: "${ONLY}" is neither fan-out nor sign-in`);
const WARMUP_SECONDS = 3;
const SENDERS = 20_000;

/** serve's CPU time so far (ms), NaN once it has gone. */
function cpuOf(pid: number): number {
  try {
    return cpuMs(pid);
  } catch {
    return NaN;
  }
}

function child(script: string): ChildProcess {
  return fork(join(ROOT, 'bench/team', script), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function ask<R>(c: ChildProcess, m: ConsolesCommand | DriverCommand): Promise<R> {
  const answer = once(c, 'message').then(([r]) => r as R);
  c.send(m);
  return answer;
}

/** 50 agents with a one-time link each, written into the store before serve opens it. */
function addAgents(dataDir: string, count: number): Array<{ id: string; link: string; password: string }> {
  const store = createStore(openDatabase(databasePath(dataDir)));
  const now = Date.now();
  const agents = Array.from({ length: count }, (_, i) => {
    const id = `agent-${String(i + 1).padStart(2, '0')}`;
    store.accounts.add({ id, name: `Agent ${i + 1}`, role: 'agent', now });
    const link = newSecret();
    store.accounts.replaceSignInLink(id, digestOf(link), now + SIGN_IN_LINK_MS, now);
    return { id, link, password: `bench password number ${i + 1}` };
  });
  store.connection.close();
  return agents;
}

/** auto_dialog and website_dialog taking turns, signed now, every sender new to this phase's pool. */
function phaseBodies(dir: string, prefix: string, secret: string, content: (n: number) => string, count: number): string {
  const bodies = signedBodies({ dir, clientId: 'bench', secret, senders: SENDERS, content, prefix });
  const auto = readFileSync(bodies.write('auto_dialog', Math.ceil(count / 2)), 'utf8').split('\n').filter(Boolean);
  const site = readFileSync(bodies.write('website_dialog', Math.ceil(count / 2)), 'utf8').split('\n').filter(Boolean);
  const lines = auto.flatMap((a, i) => [a, site[i]!]).slice(0, count);
  const file = join(dir, `team-${prefix}.ndjson`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

export async function runTeam(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-bench-team-'));
  const receiver = await startCountingReceiver();
  const consoles = child('consoles.ts');
  const driver = child('driver.ts');
  let serve: Serve | null = null;
  let floor: Target | null = null;
  try {
    // As bench/ingest: the per-client rate limit lifted (the bench measures the pipeline), replies
    // due a second after a customer's message and delivered to a local receiver, a 1,000-entry
    // knowledge base every message asks from.
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } }));
    const secret = /^secret: (\S+)$/m.exec(cli(dataDir, 'clients', 'add', 'bench', '--send-url', receiver.sendUrl))?.[1];
    if (!secret) throw new Error('could not add the bench client');
    cli(dataDir, 'clients', 'set', 'bench', '--quiet-seconds', '1');
    const kb = knowledgeBase(1000);
    writeFileSync(join(dataDir, 'kb.json'), JSON.stringify(kb));
    cli(dataDir, 'kb', 'import', join(dataDir, 'kb.json'));
    const content = (n: number): string => kbQuestion(kb, n);
    const agents = addAgents(dataDir, CONSOLES);

    // scrypt alone, before anything else runs: the pool and both cores free.
    const scrypt = await scryptAlone(SCRYPT_RUNS);
    // As passwords.ts runs them, then one at a time (a queue in front of scrypt), alternating.
    const scryptBurst: ScryptBurst[] = [];
    for (let i = 0; i < (ONLY === 'fan-out' ? 0 : 2); i++) for (const atOnce of [Infinity, 1]) scryptBurst.push(await scryptBurstAlone(SIGN_INS, atOnce));

    // The floor (bench/floor, Switchboard's search index merges) on a database of its own, the
    // same client, secret and texts: the rate is a share of its req/s, measured now.
    floor = await startTarget(['bench/floor/server.ts', join(dataDir, 'floor.db')], { env: { FLOOR_SECRET: secret, FLOOR_INDEX: 'paced' } });
    const floorBodies = signedBodies({ dir: dataDir, clientId: 'bench', secret, senders: SENDERS, content, prefix: 'floor-' });
    const floorEndpoint = floor.endpoint;
    const floorRun = (): Promise<WrkResult> => runWrk(floorEndpoint, FLOOR_CONNECTIONS, floorBodies.write('website_dialog', 9000 * FLOOR_SECONDS), { seconds: FLOOR_SECONDS, threads: 1 });
    const floorBefore = await floorRun();
    const rate = Math.round(FIXED_RATE ?? SHARE * floorBefore.rps);

    serve = await startServe(dataDir);
    const s = serve;
    // Each agent uses their one-time link: chooses a password and is signed in (a session token).
    // Five at a time: the setup is not what is measured (the sign-in bursts below are).
    const setupStarted = performance.now();
    const tokens: string[] = [];
    for (let i = 0; i < agents.length; i += 5) {
      const batch = agents.slice(i, i + 5);
      const answers = await Promise.all(batch.map((a) => authCall(s, 'usePasswordLink', { link: a.link, password: a.password })));
      answers.forEach((r, k) => {
        const value = (r.body as { ok: boolean; value?: { token: string } }).value;
        if (r.status !== 200 || !value) throw new Error(`${batch[k]!.id} could not use their sign-in link: ${r.status} ${JSON.stringify(r.body)}\nserve's stderr:\n${s.stderrTail().join('\n')}`);
        tokens.push(value.token);
      });
    }
    const setupSeconds = (performance.now() - setupStarted) / 1000;

    let phaseName = 'setup';
    const rss = sampleRss(s.pid, () => phaseName, 100);
    const phases: Phase[] = [];
    const dbPath = join(dataDir, 'switchboard.db');
    const runPhase = async (name: string, withConsoles: number, seconds: number): Promise<Phase> => {
      const file = phaseBodies(dataDir, `${name}-`, secret, content, Math.round(rate * seconds));
      if (withConsoles) {
        const opened = await ask<ConsolesReply>(consoles, { type: 'open', origin: s.consoleOrigin, tokens: tokens.slice(0, withConsoles) });
        if (opened.type !== 'opened') throw new Error(`the consoles could not connect: ${opened.type === 'failed' ? opened.error : opened.type}`);
      }
      const load = loadavg()[0]!;
      await scrapeMetrics(s.origin); // starts the event-loop delay window
      const cpu0 = cpuOf(s.pid);
      const clients0 = cpuOf(consoles.pid!) + cpuOf(driver.pid!);
      const steal0 = cpuTimes();
      phaseName = name;
      const run = await ask<DriverReply>(driver, { type: 'run', endpoint: s.endpoint, bodiesFile: file, rate, seconds, sockets: SOCKETS });
      // The last events of the phase: every answer is in, the streams get a moment to catch up.
      await new Promise((r) => setTimeout(r, 1000));
      phaseName = `${name} (after)`;
      const m = await scrapeMetrics(s.origin);
      const cpu = cpuOf(s.pid) - cpu0;
      const clientsCpu = cpuOf(consoles.pid!) + cpuOf(driver.pid!) - clients0;
      const stolen = stealShare(steal0, cpuTimes());
      let fanOut: FanOut | null = null;
      if (withConsoles) {
        const sends = run.sent.flatMap((x): Array<[string, number]> => (x.conversationId && x.status === 200 ? [[x.conversationId, x.sentAt]] : []));
        const closed = await ask<ConsolesReply>(consoles, { type: 'close', sends });
        if (closed.type === 'closed') fanOut = closed.fanOut;
      }
      const drained = await drainBacklog(dbPath);
      return {
        name,
        consoles: withConsoles,
        load,
        stolen,
        sent: run.sent,
        late: run.late,
        seconds: run.durationMs / 1000,
        cpuMsPerRequest: cpu / Math.max(1, run.sent.length),
        // The bench's own processes share the two cores: what they took is not serve's to use.
        clientsCpuShare: clientsCpu / (run.durationMs + 1000),
        loopP99: (m.get('switchboard_event_loop_delay_p99_seconds') ?? NaN) * 1000,
        loopMax: (m.get('switchboard_event_loop_delay_max_seconds') ?? NaN) * 1000,
        rssPeak: rss.peak(name, `${name} (after)`),
        fanOut,
        drainedSeconds: drained.finished ? drained.seconds : NaN,
      };
    };

    // serve may die under this load (it did, 2026-11-29): the phases run so far are still reported.
    let death: Death | null = null;
    const dead = (): boolean => {
      const reason = s.died();
      if (reason && !death) death = { phase: phaseName, reason, stderr: s.stderrTail() };
      return reason !== null;
    };
    let signIn: Awaited<ReturnType<typeof signInBursts>> | null = null;
    try {
      if (ONLY !== 'sign-in') await runPhase('warm-up', 0, WARMUP_SECONDS);
      for (let r = 1; r <= (ONLY === 'sign-in' ? 0 : ROUNDS) && !dead(); r++) {
        // ABBA: drift in the machine's speed weighs on both alike.
        const order = r % 2 === 1 ? [0, CONSOLES] : [CONSOLES, 0];
        for (const n of order) if (!dead()) phases.push(await runPhase(`round ${r}, ${n ? `${n} consoles` : 'no console'}`, n, SECONDS));
      }
      phaseName = 'sign-in';
      if (ONLY !== 'fan-out' && !dead()) signIn = await signInBursts(s, agents, Math.min(SIGN_INS, agents.length), BURSTS);
    } catch (error) {
      if (!dead()) throw error;
    }
    dead();
    rss.stop();
    const floorAfter = ONLY === 'sign-in' ? floorBefore : await floorRun();
    return report({
      seconds: SECONDS,
      rounds: Math.floor(phases.filter((p) => p.name.startsWith('round ')).length / 2),
      consoles: CONSOLES,
      rate,
      share: FIXED_RATE === null ? SHARE : null,
      floor: { connections: FLOOR_CONNECTIONS, before: floorBefore.rps, after: floorAfter.rps },
      setupSeconds,
      phases,
      scrypt,
      scryptBurst,
      signIn,
      signIns: Math.min(SIGN_INS, agents.length),
      poolSize: Number(process.env['UV_THREADPOOL_SIZE'] ?? 4),
      delivered: receiver.delivered(),
      death,
    });
  } finally {
    await serve?.stop();
    await floor?.stop();
    consoles.send({ type: 'exit' });
    driver.send({ type: 'exit' });
    receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

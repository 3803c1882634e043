import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { fork, spawnSync } from 'node:child_process';
import { availableParallelism, tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { cliOk as cli, ROOT } from '../lib.ts';
import { knowledgeBase, kbQuestion } from '../kb-data.ts';
import { deliveryFigures, honestClient, phaseFigures, startBlackHole, startReceiver } from './honest.ts';
import { ensureConsoleBuilt, scrapeMetrics, startServe, sampleRss, type Serve } from './serve.ts';
import { probeConversation, verifiedListed } from './probes.ts';
import { ATTACKS, report, type AttackId, type Run, type Tally } from './report.ts';

/**
 * bench/hostile: issue 27's attacks, one at a time, each against a fresh `serve` (a copy of one
 * prepared data dir), while an honest signed client sends at a fixed rate. Each run has three
 * phases of BENCH_HOSTILE_SECONDS: quiet (the honest client alone: the baseline), during the
 * attack, and after it. See bench/README.md.
 */
const SECONDS = Number(process.env['BENCH_HOSTILE_SECONDS'] ?? 6);
const RATE = Number(process.env['BENCH_HOSTILE_RATE'] ?? 50);
const WARMUP_SECONDS = 2;
const SENDERS = 20_000;
// Attack 6 lasts at least this long: a delivery try holds its slot for 15 s before it times out.
const DEAD_RECEIVER_SECONDS = Number(process.env['BENCH_HOSTILE_DEAD_SECONDS'] ?? 20);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Template {
  dir: string;
  secrets: Record<'honest' | 'stuffer' | 'deadend', string>;
  content: (n: number) => string;
}

function prepare(receiverUrl: string, blackHoleUrl: string): Template {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-hostile-template-'));
  const add = (id: string, sendUrl: string): string => {
    const secret = /^secret: (\S+)$/m.exec(cli(dir, 'clients', 'add', id, '--send-url', sendUrl, '--fallback-text', 'One moment please.'))?.[1];
    if (!secret) throw new Error(`could not add client ${id}`);
    // Replies fall due a second after a customer's last message, so they are delivered within a phase.
    cli(dir, 'clients', 'set', id, '--quiet-seconds', '1');
    return secret;
  };
  const secrets = { honest: add('honest', receiverUrl), stuffer: add('stuffer', receiverUrl), deadend: add('deadend', blackHoleUrl) };
  // Attack 5's probes time the reply itself: composed at once, from the conversation's context.
  cli(dir, 'clients', 'set', 'stuffer', '--quiet-seconds', '0');
  const kb = knowledgeBase(1000);
  writeFileSync(join(dir, 'kb.json'), JSON.stringify(kb));
  cli(dir, 'kb', 'import', join(dir, 'kb.json'));
  return { dir, secrets, content: (n) => kbQuestion(kb, n) };
}

/**
 * The CPU the attacker is pinned to (taskset), empty for none. A real attacker sends from its own
 * machine; here it shares two cores with serve, and its own work (building and writing gigabytes,
 * the kernel's loopback copies made in its context) would otherwise be measured as serve's cost.
 */
export const ATTACKER_CPU = process.env['BENCH_HOSTILE_ATTACKER_CPU'] ?? (availableParallelism() > 1 ? String(availableParallelism() - 1) : '');

/** The attacker process; stop() ends the attack and returns its tally. */
function startAttacker(id: AttackId, serve: Serve, t: Template, onDone: () => void) {
  const child = fork(join(ROOT, 'bench/hostile/attacker.ts'), [], {
    env: {
      ...process.env,
      HOSTILE_ATTACK: id,
      HOSTILE_ENDPOINT: serve.endpoint,
      HOSTILE_CONSOLE: serve.consoleOrigin,
      HOSTILE_STUFFER_SECRET: t.secrets.stuffer,
      HOSTILE_DEADEND_SECRET: t.secrets.deadend,
      HOSTILE_TRICKLE_SECONDS: String(SECONDS * 0.5),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (ATTACKER_CPU && child.pid) spawnSync('taskset', ['-a', '-p', '-c', ATTACKER_CPU, String(child.pid)], { stdio: 'ignore' });
  let resolveTally: (t: Tally) => void;
  const tally = new Promise<Tally>((r) => (resolveTally = r));
  child.on('message', (m: unknown) => {
    if (m === 'done') onDone();
    else if (m && typeof m === 'object' && 'tally' in m) resolveTally((m as { tally: Tally }).tally);
  });
  child.once('exit', (code) => resolveTally({ statuses: {}, errors: { [`attacker exited with ${code}`]: 1 }, requests: 0, extra: {} }));
  return {
    async stop(): Promise<Tally> {
      if (child.connected) child.send('stop');
      return tally;
    },
  };
}

async function runAttack(id: AttackId, t: Template, receiver: Awaited<ReturnType<typeof startReceiver>>, blackHole: Awaited<ReturnType<typeof startBlackHole>>): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), `sb-bench-hostile-${id}-`));
  cpSync(t.dir, dir, { recursive: true });
  receiver.arrivals.clear();
  const load = loadavg()[0]!;
  const serve = await startServe(dir);
  let phase = 'warmup';
  const rss = sampleRss(serve.pid, () => phase);
  const honest = honestClient({ endpoint: serve.endpoint, clientId: 'honest', secret: t.secrets.honest, perSecond: RATE, content: t.content, senders: SENDERS });
  const setPhase = (p: string): void => {
    phase = p;
    honest.setPhase(p);
  };
  const notes: string[] = [];
  honest.start();
  await sleep(WARMUP_SECONDS * 1000);

  setPhase('quiet');
  await scrapeMetrics(serve.origin); // starts the event-loop delay window
  const stderr0 = serve.stderrLines();
  const quietProbe = id === '5' ? probeConversation(serve, t.secrets.stuffer, 'q', t.content, receiver.arrivals) : null;
  await sleep(SECONDS * 1000);
  const probeBefore = await quietProbe;
  const mQuiet = await scrapeMetrics(serve.origin);
  const listedQuiet = id === '4' ? await verifiedListed(serve) : null;
  const stderr1 = serve.stderrLines();

  if (id === '6') blackHole.die();
  setPhase('during');
  const duringStart = performance.now();
  let attackDone = false;
  const attacker = startAttacker(id, serve, t, () => (attackDone = true));
  // A finite attack (5) runs to its end (at most 3 minutes); attack 6 for as long as a try can hold a slot.
  const minMs = (id === '6' ? Math.max(SECONDS, DEAD_RECEIVER_SECONDS) : SECONDS) * 1000;
  while (performance.now() - duringStart < minMs || (id === '5' && !attackDone && performance.now() - duringStart < 180_000)) await sleep(100);
  const duringSeconds = (performance.now() - duringStart) / 1000;
  const mDuring = await scrapeMetrics(serve.origin);
  const listedDuring = id === '4' ? await verifiedListed(serve) : null;
  // Before the stop: lines about connections the stop cuts are not the attack's.
  const stderr2 = serve.stderrLines();
  const tally = await attacker.stop();
  if (id === '6') {
    notes.push(`deliveries taken by the dead send_url: ${blackHole.received()}, ${blackHole.held()} still held at the end`);
    blackHole.recover();
  }

  setPhase('after');
  const afterProbe = id === '5' ? probeConversation(serve, t.secrets.stuffer, 'a', t.content, receiver.arrivals) : null;
  await sleep(SECONDS * 1000);
  const probeAfter = await afterProbe;
  await honest.stop();
  // Replies still due: their delivery latency counts for the phase their message was sent in.
  const expected = honest.samples.filter((s) => s.acceptedAt !== null).map((s) => s.msgId);
  const waitUntil = performance.now() + (id === '6' ? 60_000 : 30_000);
  while (expected.some((m) => !receiver.arrivals.has(m)) && performance.now() < waitUntil && !serve.died()) await sleep(100);
  rss.stop();
  const died = serve.died();
  await serve.stop();

  if (probeBefore && probeAfter) {
    notes.push(`2 messages into the stuffed conversation (one after the other's reply; no quiet period for this client): requests ${probeBefore.messages} ms before → ${probeAfter.messages} ms after; accepted → reply received ${probeBefore.reply} before → ${probeAfter.reply} after`);
    notes.push(`its transcript (50 entries), median of 3: ${probeBefore.transcript} before → ${probeAfter.transcript} after`);
  }
  if (id === '4') {
    const db = new DatabaseSync(join(dir, 'switchboard.db'), { readOnly: true });
    const rows = db.prepare("SELECT status < 300 AS ok, count(*) AS n, sum(count) AS c FROM request_log WHERE client_id = 'honest' GROUP BY 1").all() as Array<{ ok: number; n: number; c: number }>;
    db.close();
    const of = (ok: number): string => {
      const r = rows.find((x) => x.ok === ok);
      return r ? `${r.n} rows (${r.c} requests)` : '0 rows';
    };
    notes.push(`request_log under client honest at the end: 2xx ${of(1)}, refused ${of(0)}`);
  }
  rmSync(dir, { recursive: true, force: true });

  const loopMax = (m: Map<string, number>): number => (m.get('switchboard_event_loop_delay_max_seconds') ?? NaN) * 1000;
  const byPhase = <T>(f: (p: string) => T): { quiet: T; during: T; after: T } => ({ quiet: f('quiet'), during: f('during'), after: f('after') });
  return {
    id,
    load,
    duringSeconds,
    honest: byPhase((p) => phaseFigures(honest.samples, p)),
    delivery: byPhase((p) => deliveryFigures(honest.samples, p, receiver.arrivals)),
    rss: { before: rss.last('quiet'), peak: rss.peak('during', 'after'), after: rss.last('after') },
    died,
    tally,
    loopMaxMs: { quiet: loopMax(mQuiet), during: loopMax(mDuring) },
    stderr: { quiet: stderr1 - stderr0, during: stderr2 - stderr1 },
    probe: probeBefore && probeAfter ? { before: probeBefore.replyMs, after: probeAfter.replyMs } : null,
    listed: id === '4' ? { quiet: listedQuiet ?? null, during: listedDuring ?? null } : null,
    notes,
  };
}

export async function runHostile(): Promise<string> {
  const wanted = (process.env['BENCH_HOSTILE_ATTACKS'] ?? ATTACKS.map((a) => a.id).join(',')).split(',').map((s) => s.trim());
  const ids = wanted.map((w) => {
    const a = ATTACKS.find((x) => x.id === w);
    if (!a) throw new Error(`BENCH_HOSTILE_ATTACKS: unknown attack "${w}" (${ATTACKS.map((x) => x.id).join(', ')})`);
    return a.id;
  });
  ensureConsoleBuilt();
  const receiver = await startReceiver();
  const blackHole = await startBlackHole();
  const template = prepare(receiver.url, blackHole.url);
  const runs: Run[] = [];
  try {
    for (const id of ids) {
      const run = await runAttack(id, template, receiver, blackHole);
      runs.push(run);
      if (process.env['BENCH_HOSTILE_PROGRESS'] !== '0') console.error(`bench/hostile: attack ${id} done`);
    }
  } finally {
    receiver.close();
    blackHole.close();
    rmSync(template.dir, { recursive: true, force: true });
  }
  return report(runs, { seconds: SECONDS, rate: RATE, attackerCpu: ATTACKER_CPU });
}

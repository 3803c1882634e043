import { fmt, percentile } from '../lib.ts';
import type { FanOut, Sent, Spread } from './messages.ts';
import type { BurstFigures, ScryptBurst } from './sign-in.ts';

export interface Phase {
  name: string;
  consoles: number;
  load: number;
  stolen: number | null;
  sent: Sent[];
  /** Requests the driver sent over 5 ms after their due time. */
  late: number;
  seconds: number;
  cpuMsPerRequest: number;
  /** CPU time of the consoles and driver processes over the phase, in cores (1 = one core busy). */
  clientsCpuShare: number;
  loopP99: number;
  loopMax: number;
  rssPeak: number;
  fanOut: FanOut | null;
  drainedSeconds: number;
}

/** serve exited before the bench stopped it. */
export interface Death {
  phase: string;
  reason: string;
  stderr: string[];
}

export interface TeamRun {
  seconds: number;
  rounds: number;
  consoles: number;
  rate: number;
  share: number | null;
  floor: { connections: number; before: number; after: number };
  setupSeconds: number;
  phases: Phase[];
  scrypt: { hash: Spread; verify: Spread };
  /** The same number of hashes at once in the bench process, its loop measured: the control. */
  scryptBurst: ScryptBurst[];
  signIn: { burst: BurstFigures[]; idle: BurstFigures[] } | null;
  signIns: number;
  poolSize: number;
  delivered: number;
  death: Death | null;
}

const MB = 1024 * 1024;
/** Issue 28's RSS bound, 300 MB (decimal), in the MiB the tables print. */
const RSS_LIMIT_MIB = 300e6 / MB;
const verdict = (ok: boolean): string => (ok ? 'met' : '**not met**');

/** "a (b–c)": the median over rounds and the spread. */
function range(values: number[], digits: number, unit = ''): string {
  const s = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  if (!s.length) return '–';
  const mid = s[Math.floor((s.length - 1) / 2)]!;
  return s.length === 1 ? `${fmt(mid, digits)}${unit}` : `${fmt(mid, digits)}${unit} (${fmt(s[0]!, digits)}–${fmt(s[s.length - 1]!, digits)})`;
}

function ingest(p: Phase): { rps: number; p50: number; p99: number; failed: number } {
  const ok = p.sent.filter((s) => s.status === 200);
  const sorted = Float64Array.from(p.sent.map((s) => s.latency)).sort();
  return { rps: ok.length / p.seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), failed: p.sent.length - ok.length };
}

export function report(r: TeamRun): string {
  const b = r.signIn;
  const rounds = Array.from({ length: r.rounds }, (_, i) => {
    const mine = r.phases.filter((p) => p.name.startsWith(`round ${i + 1},`));
    return { none: mine.find((p) => p.consoles === 0)!, team: mine.find((p) => p.consoles > 0)! };
  });
  const fan = rounds.map((x) => x.team.fanOut);
  const allP99 = fan.map((f) => f?.allConsoles.p99 ?? NaN);
  const ratios = rounds.map((x) => ingest(x.team).p99 / ingest(x.none).p99);
  const rssTeam = rounds.map((x) => x.team.rssPeak / MB);
  const rssNone = rounds.map((x) => x.none.rssPeak / MB);
  const rssBurst = r.signIn?.burst.map((b) => b.rssPeak / MB) ?? [];
  const burstLoopMax = r.signIn?.burst.map((b) => b.loopMax) ?? [];
  const missing = fan.reduce((n, f) => n + (f?.missing ?? 0), 0);

  const fanOutTargets = [
    `| fan-out, request sent → event read by all ${r.consoles} consoles, p99 < 250 ms | ${range(allP99, 1, ' ms')} | – | ${verdict(allP99.every((v) => v < 250))} |`,
    `| ingest p99 with ${r.consoles} consoles ≤ 1.5× with none (each round's pair) | ${range(ratios, 2, '×')} | ${range(rounds.map((x) => ingest(x.team).p99), 1, ' ms')} against ${range(rounds.map((x) => ingest(x.none).p99), 1, ' ms')} | ${verdict(ratios.every((v) => v <= 1.5))} |`,
    `| serve's RSS (whole process) < 300 MB (286 MiB) with ${r.consoles} consoles, peak per phase | ${range(rssTeam, 0, ' MiB')} | ${range(rssNone, 0, ' MiB')} with no console | ${verdict(rssTeam.every((v) => v < RSS_LIMIT_MIB))} |`,
    `| every event reaches every console | ${fmt(missing)} (message, console) pairs missing | – | ${verdict(missing === 0)} |`,
  ];
  const signInTargets = [
    `| event-loop delay max < 20 ms while ${r.signIns} sign-ins arrive at once (serve's /metrics) | ${range(burstLoopMax, 1, ' ms')} | ${range(b?.idle.map((x) => x.loopMax) ?? [], 1, ' ms')} idle; ${range(r.scryptBurst.filter((c) => c.atOnce === Infinity).map((c) => c.loopMax), 1, ' ms')} for the hashes alone in the bench process (${range(r.scryptBurst.filter((c) => c.atOnce === 1).map((c) => c.loopMax), 1, ' ms')} one at a time) | ${verdict(burstLoopMax.every((v) => v < 20))} |`,
    `| serve's RSS < 300 MB (286 MiB) during the sign-ins | ${range(rssBurst, 0, ' MiB')} | – | ${verdict(rssBurst.every((v) => v < RSS_LIMIT_MIB))} |`,
  ];
  const targets = [
    '| target (issue 28) | figure: median (spread over rounds or bursts) | baseline in the same run | status |',
    '|---|---:|---:|---|',
    ...(r.rounds ? fanOutTargets : []),
    ...(b ? signInTargets : []),
  ];

  const phaseRows = r.phases.map((p) => {
    const i = ingest(p);
    const f = p.fanOut;
    const fanCols = f
      ? `${fmt(f.each.p50, 1)} / ${fmt(f.each.p99, 1)} | ${fmt(f.allConsoles.p50, 1)} / ${fmt(f.allConsoles.p99, 1)} / ${fmt(f.allConsoles.max, 0)} | ${fmt(f.missing)} | ${fmt((f.events['conversation'] ?? 0) / r.consoles)} / ${fmt((f.events['request'] ?? 0) / r.consoles)} / ${fmt(f.bytes / r.consoles / 1024)} KiB | ${fmt(f.clientLoopP99, 1)} / ${fmt(f.clientLoopMax, 0)}`
      : '– | – | – | – | –';
    return `| ${p.name} | ${fmt(p.load, 2)} | ${p.stolen === null ? '–' : fmt(p.stolen, 1)} | ${fmt(i.rps)} | ${fmt(i.p50, 1)} / ${fmt(i.p99, 1)} | ${i.failed}${p.late ? ` (${fmt(p.late)} sent late)` : ''} | ${fmt(p.cpuMsPerRequest * 1000)} | ${fmt(p.clientsCpuShare, 2)} | ${fmt(p.loopP99, 1)} / ${fmt(p.loopMax, 0)} | ${fmt(p.rssPeak / MB)} | ${fanCols} | ${fmt(p.drainedSeconds, 1)} |`;
  });

  const signInRows = (b?.burst ?? []).map((x, k) => {
    const idle = b!.idle[k]!;
    return `| ${k + 1} | ${fmt(x.answer.p50)} / ${fmt(x.answer.max)} | ${x.failed} | ${fmt(x.loopP99, 1)} / ${fmt(x.loopMax, 1)} | ${fmt(idle.loopP99, 1)} / ${fmt(idle.loopMax, 1)} | ${fmt(x.healthz.p50, 1)} / ${fmt(x.healthz.max, 1)} | ${fmt(idle.healthz.p50, 1)} / ${fmt(idle.healthz.max, 1)} | ${fmt(x.rssPeak / MB)} / ${fmt(idle.rssPeak / MB)} |`;
  });

  // Open loop above what serve answers even with no console: the figures are the queue's.
  const plain = rounds.map((x) => ingest(x.none).rps);
  const overloaded = plain.some((v) => v < 0.95 * r.rate)
    ? [`**Overloaded:** with no console at all serve answered ${range(plain, 0, ' req/s')} of the ${fmt(r.rate)} asked, so requests queued and the latency and fan-out figures above measure that queue (serve's own limit on this machine, not the consoles'). BENCH_TEAM_RATE below it measures the fan-out itself.`, '']
    : [];
  const rateSource = r.share === null ? 'BENCH_TEAM_RATE' : `${r.share} × the floor's ${fmt(r.floor.before)} req/s at ${r.floor.connections} connections`;
  return [
    `bench/team: ${r.consoles} agents signed in through their one-time links (${fmt(r.setupSeconds, 1)} s for all ${r.consoles} at once), each holding GET /api/events open (bench/team/consoles.ts, one process); signed auto_dialog and website_dialog in turn, open loop at ${fmt(r.rate)} req/s (${rateSource}; measured again at the end: ${fmt(r.floor.after)}) from bench/team/driver.ts, every message from a new customer; ${r.rounds} rounds of ${r.seconds} s, no console and ${r.consoles} consoles alternating (ABBA); replies delivered to a local receiver (${fmt(r.delivered)} in all).`,
    'Fan-out delay: the driver\'s send time → the first `conversation` event naming the answer\'s conversation_id on each stream (one monotonic clock for both processes). Ingest latency counts from each request\'s due time. Loop delay: serve\'s /metrics, beyond its 10 ms tick.',
    '',
    ...overloaded,
    ...targets,
    ...(r.rounds ? ['', '| phase | load | CPU stolen % | ingest req/s | ingest p50 / p99 ms | failed | serve CPU per request µs | bench clients\' CPU, cores | serve loop delay p99 / max ms | serve RSS peak MiB | fan-out each console p50 / p99 ms | all consoles p50 / p99 / max ms | pairs missing | events per console: conversation / request / KiB | consoles process loop p99 / max ms | backlog drained s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...phaseRows] : []),
    ...(b ? ['',
    `Sign-in cost: scrypt N=2^15, r=8, p=1 (src/main/accounts/passwords.ts) in the bench process, one at a time: hash ${fmt(r.scrypt.hash.p50, 1)} ms (p50; max ${fmt(r.scrypt.hash.max, 1)}), verify ${fmt(r.scrypt.verify.p50, 1)} ms (max ${fmt(r.scrypt.verify.max, 1)}). libuv thread pool: ${r.poolSize} threads. Control: ${r.signIns} hashes arriving at once in the bench process, nothing else on its loop, as passwords.ts runs them / one at a time: ${r.scryptBurst.map((c) => `${c.atOnce === Infinity ? 'as run' : `${c.atOnce} at a time`} ${fmt(c.ms)} ms to the last, RSS +${fmt(c.rssGrowth / MB)} MiB, loop delay p99 / max ${fmt(c.loopP99, 1)} / ${fmt(c.loopMax, 1)} ms`).join('; ')}. Then ${r.signIns} agents sign in (POST /api/auth/signIn) at the same moment, ${b.burst.length} times, each burst in a 2.5 s window beside an idle window of the same length (no ingest):`,
    '',
    `| burst | sign-in answer p50 / last ms | failed | serve loop delay p99 / max ms | idle: loop p99 / max ms | GET /healthz p50 / max ms | idle: /healthz p50 / max ms | RSS peak MiB burst / idle |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...signInRows] : []),
    ...(r.death ? ['', `**serve died during "${r.death.phase}" (${r.death.reason})**; the figures above are the phases it finished. The last lines it wrote to stderr:`, '', '```', ...r.death.stderr, '```'] : []),
  ].join('\n');
}

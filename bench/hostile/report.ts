import { fmt } from '../lib.ts';
import type { PhaseFigures } from './honest.ts';

/** Issue 27's attacks as bench/hostile runs them (attacker.ts has each one's code). */
export const ATTACKS = [
  { id: '1a', title: '1a. nested `[`, 8 MB, one connection back to back, no client' },
  { id: '1b', title: '1b. 400,000 keys (4.7 MB), one connection, real client id, wrong signature' },
  { id: '2', title: '2. 50 concurrent 8 MB bodies, unknown client, repeated' },
  { id: '2s', title: '2s. 50 connections trickling 8 MB bodies, unknown client' },
  { id: '3', title: '3. `GET /assets/` (console) and requests without Host (endpoint), flooded' },
  { id: '4', title: '4. unsigned requests claiming client honest, flooded from 1,000 addresses' },
  { id: '5', title: '5. signed client: 12 messages with 9.5 MB unknown fields, one conversation' },
  { id: '6', title: '6. second client, send_url never answers, 130 auto_dialog replies due' },
] as const;
export type AttackId = (typeof ATTACKS)[number]['id'];

export interface Tally {
  statuses: Record<string, number>;
  errors: Record<string, number>;
  requests: number;
  extra: Record<string, unknown>;
}

type Phases<T> = { quiet: T; during: T; after: T };

export interface Run {
  id: AttackId;
  load: number;
  duringSeconds: number;
  honest: Phases<PhaseFigures>;
  delivery: Phases<{ p50: number; p99: number; missing: number }>;
  rss: { before: number; peak: number; after: number };
  died: string | null;
  tally: Tally;
  loopMaxMs: { quiet: number; during: number };
  stderr: { quiet: number; during: number };
  /** Attack 5: the reply to 5 messages into the stuffed conversation, before and after. */
  probe: { before: number; after: number } | null;
  /** Attack 4: 2xx rows among the 200 the console lists first for client honest (null: the call failed). */
  listed: { quiet: { ok: number; rows: number } | null; during: { ok: number; rows: number } | null } | null;
  notes: string[];
}

const MIB = 1024 * 1024;
const verdict = (ok: boolean): string => (ok ? 'met' : '**not met**');
const ms = (n: number): string => (Number.isFinite(n) ? fmt(n, n < 100 ? 1 : 0) : '–');
const counts = (r: Record<string, number>): string => Object.entries(r).map(([k, n]) => `${k}: ${fmt(n)}`).join(', ') || 'none';

function fiveXx(run: Run): { honest: number; attack: number } {
  const honest = run.honest.quiet.fiveXx + run.honest.during.fiveXx + run.honest.after.fiveXx;
  const attack = Object.entries(run.tally.statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
  return { honest, attack };
}

/** The targets' row of one attack: honest p99 within 2× of quiet, RSS growth < 100 MiB, no crash, no 5xx. */
function targetRow(title: string, p99Label: string, quiet: number, during: number, run: Run, withRss = true): string {
  const ratio = during / quiet;
  const growth = (run.rss.peak - run.rss.before) / MIB;
  const five = fiveXx(run);
  const crashed = run.died ? 1 : 0;
  const ok = ratio <= 2 && (!withRss || growth < 100) && !crashed && five.honest + five.attack === 0;
  const rss = withRss
    ? `${fmt(run.rss.before / MIB)} → ${fmt(run.rss.peak / MIB)} → ${fmt(run.rss.after / MIB)} (+${fmt(growth)})`
    : 'as above';
  return `| ${title} | ${p99Label}${ms(quiet)} → ${ms(during)} (${fmt(ratio, 1)}×) | ${rss} | ${crashed}${run.died ? ` (${run.died})` : ''} | ${five.honest} / ${five.attack} | ${verdict(ok)} |`;
}

/**
 * Attack 4's own target (issue 27, item 4): unsigned requests must not crowd the client's
 * verified rows out of its request log; met when the console's first 200 rows for the client
 * hold as many 2xx rows at the end of the attack as at the end of the quiet phase.
 */
function listedRow(run: Run): string {
  const { quiet, during } = run.listed!;
  const show = (l: { ok: number; rows: number } | null): string => (l ? `${l.ok} of ${l.rows}` : 'call failed');
  const ok = quiet !== null && during !== null && during.ok >= quiet.ok;
  return `| 4. the same: client honest's 2xx rows among the 200 the console lists first, end of quiet → end of attack | ${show(quiet)} → ${show(during)} | – | – | – | ${verdict(ok)} |`;
}

export function report(runs: Run[], o: { seconds: number; rate: number; attackerCpu: string }): string {
  const title = (id: AttackId): string => ATTACKS.find((a) => a.id === id)!.title;
  const targets: string[] = [];
  for (const r of runs) {
    if (r.id === '6') {
      targets.push(targetRow(title(r.id), 'delivery ', r.delivery.quiet.p99, r.delivery.during.p99, r));
      continue;
    }
    targets.push(targetRow(title(r.id), '', r.honest.quiet.p99, r.honest.during.p99, r));
    if (r.listed) targets.push(listedRow(r));
    if (r.probe) targets.push(targetRow('5. the same: reply to a message in the stuffed conversation (slower of 2), before → after', 'reply ', r.probe.before, r.probe.after, r, false));
  }
  const details = runs.map((r) => {
    const h = r.honest;
    const d = r.delivery;
    const failed = (f: PhaseFigures): string => (Object.keys(f.failures).length ? `${f.otherFailures + f.fiveXx} (${counts(f.failures)})` : '0');
    const failures = `${failed(h.quiet)} / ${failed(h.during)} / ${failed(h.after)}`;
    const delivery = `${ms(d.quiet.p50)} / ${ms(d.quiet.p99)} → ${ms(d.during.p50)} / ${ms(d.during.p99)} → ${ms(d.after.p50)} / ${ms(d.after.p99)}${d.quiet.missing + d.during.missing + d.after.missing ? ` (${d.quiet.missing + d.during.missing + d.after.missing} never arrived)` : ''}`;
    return `| ${r.id} | ${fmt(r.load, 2)} | ${fmt(r.duringSeconds, 1)} | ${fmt(h.during.requests)} | ${ms(h.quiet.p50)} / ${ms(h.during.p50)} / ${ms(h.after.p50)} | ${ms(h.quiet.p99)} / ${ms(h.during.p99)} / ${ms(h.after.p99)} | ${failures} | ${delivery} | ${ms(r.loopMaxMs.quiet)} / ${ms(r.loopMaxMs.during)} | ${fmt(r.tally.requests)} | ${counts(r.tally.statuses)} | ${counts(r.tally.errors)} | ${r.stderr.quiet} / ${r.stderr.during} |`;
  });
  const notes = runs.flatMap((r) => {
    const extra = Object.entries(r.tally.extra).map(([k, v]) => `${k}: ${String(v)}`);
    return [...r.notes, ...extra].map((n) => `- ${r.id}: ${n}`);
  });
  return [
    `bench/hostile: each attack against a fresh serve (default limits) while client honest sends ${o.rate} signed messages/s (open loop, 3 in 4 auto_dialog with replies delivered to a local receiver, 1 in 4 website_dialog; from 127.0.0.2, attackers from other 127/8 addresses${o.attackerCpu ? `, the attacker process pinned to CPU ${o.attackerCpu}` : ''}); phases of ${o.seconds} s: quiet (the baseline), during the attack, after it`,
    '',
    '| attack | honest p99 ms quiet → during (target ≤ 2×) | serve RSS MiB before → peak → after (growth; target < 100) | crashes | 5xx honest / attack | targets |',
    '|---|---:|---:|---:|---:|---|',
    ...targets,
    '',
    '| attack | load | attack s | honest requests during | honest p50 ms quiet / during / after | honest p99 ms quiet / during / after | honest failures quiet / during / after | honest delivery p50 / p99 ms quiet → during → after | event-loop delay max ms quiet / during | attack requests | attack answers by status | attack requests without an answer | serve stderr lines quiet / during |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|',
    ...details,
    '',
    ...notes,
  ].join('\n');
}

import { createInterface } from 'node:readline/promises';
import type { Store } from '../store/index.ts';
import type { ReplayRunRow } from '../store/replay.ts';
import type { ReplayEstimate, ReplayRowSide, ReplayRowView, ReplayTotals } from '../../shared/console-replay.ts';
import { REPLAY_LIMITS } from '../../shared/console-replay.ts';
import { createReplay, type ReplayDeps } from '../replay/replay.ts';
import { executeReplay } from '../replay/replay-runs.ts';
import { parseInstant, ReplayInputError } from '../replay/window.ts';
import { UsageError } from './args.ts';


export interface EvalFlags {
  since?: string;
  from?: string;
  to?: string;
  client?: string;
  engine?: string;
  threshold?: string;
  'system-prompt'?: string;
  'with-proposals'?: boolean;
  concurrency?: string;
  limit?: string;
  yes?: boolean;
  all?: boolean;
}

/** Where the replay asks, says its progress and hears Ctrl-C; tests pass their own. */
export interface EvalIo {
  /** null when nobody can answer (standard input is not a terminal). */
  confirm: ((question: string) => Promise<boolean>) | null;
  progress: (line: string) => void;
  /** Calls `cancel` on an interrupt; returns the unsubscribe. */
  onInterrupt: (cancel: () => void) => () => void;
}

export const processEvalIo: EvalIo = {
  confirm: process.stdin.isTTY
    ? async (question) => {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        try {
          return /^y(es)?$/i.test((await rl.question(question)).trim());
        } finally {
          rl.close();
        }
      }
    : null,
  progress: (line) => process.stderr.write(`${line}\n`),
  onInterrupt: (cancel) => {
    process.once('SIGINT', cancel);
    return () => process.off('SIGINT', cancel);
  },
};

function intFlag(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
  return n;
}

function thresholdFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new UsageError(`--threshold must be a number from 0 to 1 (the built-in engine's match score), got "${value}"`);
  return n;
}

const when = (ms: number): string => new Date(ms).toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z').replace('T', ' ');
const oneLine = (text: string, max = 100): string => {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function estimateText(e: ReplayEstimate): string {
  const lines = [`${e.questions} question${e.questions === 1 ? '' : 's'} from ${when(e.from)} to ${when(e.to)}${e.capped ? ' (the newest left out by --limit)' : ''}`];
  if (e.llmCalls === 0) lines.push('no LLM call: the built-in engine answers both ways');
  else {
    const basis = e.basis === 'measured' ? 'at the latency measured in earlier replays' : "at the engines' time-out, an upper bound";
    lines.push(`${e.llmCalls} LLM call${e.llmCalls === 1 ? '' : 's'}, ${e.concurrency} at a time: about ${e.promptTokens} prompt tokens and up to ${e.completionTokensMax} answer tokens; about ${e.seconds} s ${basis}`);
  }
  return lines.join('\n');
}

const sideText = (s: ReplayRowSide): string =>
  `${s.handoff ? 'handoff' : 'answered'}${s.score !== null ? ` (${s.score})` : ''} [${s.engine}]${s.handoff ? (s.cause ? `: ${oneLine(s.cause, 80)}` : '') : `: ${oneLine(s.content)}`}`;

export function totalsText(t: ReplayTotals): string {
  const pad = (v: string | number, n = 10): string => String(v).padStart(n);
  const lines = [
    `${pad('', 12)}${pad('before')}${pad('after')}`,
    `${'answered'.padEnd(12)}${pad(t.before.answered)}${pad(t.after.answered)}`,
    `${'handed off'.padEnd(12)}${pad(t.before.handoff)}${pad(t.after.handoff)}`,
    `changed: ${t.changed.now_answered} now answered, ${t.changed.now_handoff} now handed off, ${t.changed.other_answer} answered differently (of ${t.questions})`,
  ];
  for (const [name, s] of [['before', t.before], ['after', t.after]] as const) {
    if (s.llmCalls === 0) continue;
    const tokens = s.callsWithUsage > 0 ? `${s.promptTokens + s.completionTokens} tokens (${s.promptTokens} prompt, ${s.completionTokens} answer; ${s.callsWithUsage} of ${s.llmCalls} calls reported usage)` : 'no token usage reported';
    lines.push(`LLM ${name}: ${s.llmCalls} calls, ${tokens}, ${Math.round(s.llmMs / s.llmCalls)} ms a call on average`);
  }
  lines.push(`took ${(t.elapsedMs / 1000).toFixed(1)} s`);
  return lines.join('\n');
}

export function rowsText(rows: readonly ReplayRowView[]): string {
  return rows
    .map((r) => [`#${r.messageId} ${r.clientId} ${when(r.askedAt)} ${r.change}: "${oneLine(r.question)}"`, `  before: ${sideText(r.before)}`, `  after:  ${sideText(r.after)}`].join('\n'))
    .join('\n');
}

function candidateText(run: ReplayRunRow): string {
  const p = run.params;
  const parts = [
    p.engine !== null ? `engine ${p.engine}` : null,
    p.threshold !== null ? `threshold ${p.threshold} (was ${p.baseThreshold})` : null,
    p.systemPrompt !== null ? `system prompt "${oneLine(p.systemPrompt, 40)}"` : null,
    p.withProposals ? 'with pending proposals' : null,
  ].filter((x) => x !== null);
  return parts.join(', ');
}

function runLine(run: ReplayRunRow): string {
  const t = run.totals;
  const outcome = t ? `${t.questions} questions, answered ${t.before.answered} → ${t.after.answered}, ${t.changed.now_answered + t.changed.now_handoff + t.changed.other_answer} changed` : (run.error ?? '');
  return `${run.id}\t${when(run.createdAt)}\t${run.status}\t${run.params.clientId ?? 'all clients'}\t${candidateText(run)}\t${outcome}`;
}

/** `eval replay|runs|show`: replays of past questions against a candidate configuration. */
export async function evalCommand(store: Store, deps: Omit<ReplayDeps, 'store'>, args: string[], flags: EvalFlags, io: EvalIo = processEvalIo): Promise<string> {
  const [action, id] = args;
  switch (action) {
    case 'replay': {
      const replay = createReplay({ ...deps, store });
      const at = Date.now();
      let plan;
      try {
        const from = flags.from === undefined ? undefined : parseInstant(flags.from, '--from');
        const to = flags.to === undefined ? undefined : parseInstant(flags.to, '--to');
        plan = await replay.plan(
          {
            ...(flags.since !== undefined ? { since: flags.since } : {}),
            ...(from !== undefined ? { from } : {}),
            ...(to !== undefined ? { to } : {}),
            ...(flags.client !== undefined ? { clientId: flags.client } : {}),
            ...(flags.engine !== undefined ? { engine: flags.engine } : {}),
            ...(flags.threshold !== undefined ? { threshold: thresholdFlag(flags.threshold) } : {}),
            ...(flags['system-prompt'] !== undefined ? { systemPrompt: flags['system-prompt'] } : {}),
            withProposals: flags['with-proposals'] ?? false,
            concurrency: intFlag('concurrency', flags.concurrency, 1, REPLAY_LIMITS.concurrencyMax) ?? REPLAY_LIMITS.concurrencyDefault,
            limit: intFlag('limit', flags.limit, 1, REPLAY_LIMITS.questionsMax) ?? REPLAY_LIMITS.questionsDefault,
          },
          at,
        );
      } catch (error) {
        if (error instanceof ReplayInputError) throw new UsageError(error.message);
        throw error;
      }
      if (plan.questions.length === 0) return `no customer questions to replay from ${when(plan.params.from)} to ${when(plan.params.to)}${plan.params.clientId ? ` for client ${plan.params.clientId}` : ''}`;
      io.progress(estimateText(await replay.estimate(plan)));
      if (plan.proposals) io.progress(`candidate knowledge base: ${plan.proposals.entries} new entries and ${plan.proposals.phrasings} new phrasings from pending proposals${plan.proposals.orphaned ? ` (${plan.proposals.orphaned} phrasings for entries since removed, left out)` : ''}`);
      if (!flags.yes) {
        if (!io.confirm) throw new UsageError('add --yes to run without being asked (standard input is not a terminal)');
        if (!(await io.confirm('Run it? [y/N] '))) return 'not run';
      }
      const controller = new AbortController();
      const unsubscribe = io.onInterrupt(() => {
        io.progress('cancelling: the questions answered so far are kept');
        controller.abort();
      });
      let lastShown = 0;
      try {
        const { runId, result, totals } = await executeReplay(store, replay, plan, {
          startedBy: null,
          at: Date.now,
          signal: controller.signal,
          onProgress: (done, total) => {
            // About every tenth of the way: a line per question would drown the report.
            if (done === total || done - lastShown >= Math.max(1, Math.ceil(total / 10))) {
              lastShown = done;
              io.progress(`${done}/${total} questions`);
            }
          },
        });
        const changed = result.rows.filter((r) => r.change !== 'same');
        return [
          `replay run ${runId} ${result.status === 'cancelled' ? 'cancelled' : 'done'}: ${candidateText(store.replay.run(runId)!)}`,
          totalsText(totals),
          ...(changed.length ? ['', 'changed questions:', rowsText(changed)] : ['', 'no question changes its outcome']),
          '',
          `see it again with: npm run cli -- eval show ${runId}`,
        ].join('\n');
      } finally {
        unsubscribe();
      }
    }
    case 'runs': {
      const runs = store.replay.runs(intFlag('limit', flags.limit, 1, 500) ?? 50);
      if (runs.length === 0) return 'no replays yet: npm run cli -- eval replay --since 7d --threshold 0.4';
      return runs.map(runLine).join('\n');
    }
    case 'show': {
      const runId = id === undefined ? Number.NaN : Number(id);
      if (!Number.isInteger(runId) || runId <= 0) throw new UsageError(`eval show needs a RUN number (see "eval runs"), got "${id ?? ''}"`);
      const run = store.replay.run(runId);
      if (!run) throw new UsageError(`no replay run ${runId}; see "eval runs"`);
      const rows = store.replay.rows(runId, { changedOnly: !flags.all, limit: REPLAY_LIMITS.questionsMax });
      return [
        `replay run ${run.id}, ${when(run.createdAt)}, ${run.status}: ${candidateText(run)}`,
        `questions from ${when(run.params.from)} to ${when(run.params.to)}, ${run.params.clientId ? `client ${run.params.clientId}` : 'all clients'}`,
        ...(run.error ? [`error: ${run.error}`] : []),
        ...(run.totals ? [totalsText(run.totals)] : []),
        ...(rows.length ? ['', flags.all ? 'questions:' : 'changed questions:', rowsText(rows)] : []),
      ].join('\n');
    }
    default:
      throw new UsageError(`unknown eval command "${action ?? ''}"; use replay, runs or show`);
  }
}

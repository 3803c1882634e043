import { useEffect, useId } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { ConsoleOutputs, ReplayRowSide, ReplayRunSummary, ReplaySideTotals } from '../../../shared/console-api.ts';
import { REPLAY_LIMITS } from '../../../shared/console-api.ts';
import { fullTime, shortTime } from '../format.ts';

const WINDOWS = ['24h', '7d', '30d'] as const;

function Form() {
  const { t } = useTranslation();
  const form = useConsole((s) => s.replayForm);
  const setForm = useConsole((s) => s.setReplayForm);
  const clients = useConsole((s) => s.clients);
  const engines = useConsole((s) => s.replayEngines);
  const busy = useConsole((s) => s.replayBusy);
  const estimate = useConsole((s) => s.estimateReplay);
  const id = useId();
  return (
    <form
      className="replay-form"
      aria-label={t('replay.form.label')}
      onSubmit={(e) => {
        e.preventDefault();
        void estimate();
      }}
    >
      <label>
        <span>{t('replay.form.window')}</span>
        <select value={form.since} onChange={(e) => setForm({ ...form, since: e.target.value })}>
          {WINDOWS.map((w) => (
            <option key={w} value={w}>
              {t(`replay.form.windows.${w}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('replay.form.client')}</span>
        <select value={form.clientId} onChange={(e) => setForm({ ...form, clientId: e.target.value })}>
          <option value="">{t('replay.form.allClients')}</option>
          {clients.map((c) => (
            <option key={c.id} value={c.id}>
              {c.id}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('replay.form.engine')}</span>
        <select value={form.engine} onChange={(e) => setForm({ ...form, engine: e.target.value })}>
          <option value="">{t('replay.form.engineAsNow')}</option>
          {engines.map((name) => (
            <option key={name} value={name}>
              {name === 'kb' ? t('replay.form.builtin') : name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('replay.form.threshold')}</span>
        <input type="number" min={0} max={1} step={0.05} value={form.threshold} aria-describedby={`${id}-threshold`} onChange={(e) => setForm({ ...form, threshold: e.target.value })} />
        <small id={`${id}-threshold`} className="muted">
          {t('replay.form.thresholdHint')}
        </small>
      </label>
      {form.engine !== 'kb' && (
        <label className="wide">
          <span>{t('replay.form.systemPrompt')}</span>
          <textarea rows={2} value={form.systemPrompt} maxLength={REPLAY_LIMITS.systemPromptMax} onChange={(e) => setForm({ ...form, systemPrompt: e.target.value })} />
        </label>
      )}
      <label className="check">
        <input type="checkbox" checked={form.withProposals} onChange={(e) => setForm({ ...form, withProposals: e.target.checked })} />
        <span>{t('replay.form.withProposals')}</span>
      </label>
      <label>
        <span>{t('replay.form.concurrency')}</span>
        <input type="number" min={1} max={REPLAY_LIMITS.concurrencyMax} step={1} value={form.concurrency} onChange={(e) => setForm({ ...form, concurrency: Math.max(1, Math.min(REPLAY_LIMITS.concurrencyMax, Math.round(Number(e.target.value) || 1))) })} />
      </label>
      <button type="submit" disabled={busy}>
        {t('replay.form.estimate')}
      </button>
    </form>
  );
}

function Estimate() {
  const { t } = useTranslation();
  const e = useConsole((s) => s.replayEstimate);
  const busy = useConsole((s) => s.replayBusy);
  const start = useConsole((s) => s.startReplay);
  const dismiss = useConsole((s) => s.dismissReplayEstimate);
  if (!e) return null;
  return (
    <section className="replay-estimate" aria-label={t('replay.estimate.label')} data-testid="replay-estimate">
      <p>
        <strong>{t('replay.estimate.questions', { count: e.questions })}</strong>
        {e.capped && <> ({t('replay.estimate.capped', { limit: e.questions })})</>}
      </p>
      {e.llmCalls === 0 ? (
        <p>{t('replay.estimate.noLlm')}</p>
      ) : (
        <p>
          {t('replay.estimate.llm', { calls: e.llmCalls, concurrency: e.concurrency, prompt: e.promptTokens, completion: e.completionTokensMax, seconds: e.seconds })}{' '}
          {t(e.basis === 'measured' ? 'replay.estimate.measured' : 'replay.estimate.timeout')}
        </p>
      )}
      <div className="row">
        <button type="button" className="primary" disabled={busy || e.questions === 0} onClick={() => void start()}>
          {t('replay.estimate.confirm')}
        </button>
        <button type="button" onClick={dismiss}>
          {t('replay.estimate.back')}
        </button>
      </div>
    </section>
  );
}

/**
 * One side of a changed question. An answer matched below the threshold in force today is flagged:
 * a lower threshold's new answers are where the wrong ones are, and they read as wins otherwise.
 */
function Side({ side, below }: { side: ReplayRowSide; below?: number }) {
  const { t } = useTranslation();
  const doubtful = below !== undefined && !side.handoff && side.score !== null && side.score < below;
  return (
    <>
      <div className={side.handoff ? 'outcome handoff' : 'outcome answered'}>
        {side.handoff ? t('replay.result.handoff') : t('replay.result.answered')}
        {side.score !== null && <> · {t('replay.result.score', { score: side.score })}</>} · {side.engine}
      </div>
      {doubtful && (
        <div className="tone-warn" data-testid="replay-doubtful">
          {t('replay.result.doubtful', { threshold: below })}
        </div>
      )}
      <div className="content">{side.handoff ? (side.cause ?? side.content) : side.content}</div>
    </>
  );
}

function LlmLine({ name, s }: { name: string; s: ReplaySideTotals }) {
  const { t } = useTranslation();
  if (s.llmCalls === 0) return null;
  const ms = Math.round(s.llmMs / s.llmCalls);
  return (
    <p>
      {s.callsWithUsage > 0
        ? t('replay.result.llm', { side: name, calls: s.llmCalls, tokens: s.promptTokens + s.completionTokens, prompt: s.promptTokens, completion: s.completionTokens, ms })
        : t('replay.result.noUsage', { side: name, calls: s.llmCalls, ms })}
    </p>
  );
}

function Result({ run }: { run: ConsoleOutputs['getReplayRun'] }) {
  const { t } = useTranslation();
  const cancel = useConsole((s) => s.cancelReplay);
  const totals = run.totals;
  const headingId = useId();
  return (
    <section className="replay-result" aria-labelledby={headingId} data-testid="replay-result">
      <h2 id={headingId}>
        {t('replay.result.title', { id: run.id })} · {t(`replay.result.status.${run.status}`)}
      </h2>
      {run.status === 'running' && run.progress && (
        <div className="row">
          <progress max={run.progress.total} value={run.progress.done} aria-label={t('replay.progress.label', { id: run.id })} />
          <span>{t('replay.progress.text', run.progress)}</span>
          <button type="button" onClick={() => void cancel()}>
            {t('replay.progress.cancel')}
          </button>
        </div>
      )}
      {run.error && <p role="alert">{run.error}</p>}
      {totals && (
        <>
          <table className="grid replay-totals">
            <caption>{t('replay.result.totals')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('replay.result.outcome')}</th>
                <th scope="col">{t('replay.result.before')}</th>
                <th scope="col">{t('replay.result.after')}</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">{t('replay.result.answered')}</th>
                <td>{totals.before.answered}</td>
                <td>{totals.after.answered}</td>
              </tr>
              <tr>
                <th scope="row">{t('replay.result.handoff')}</th>
                <td>{totals.before.handoff}</td>
                <td>{totals.after.handoff}</td>
              </tr>
            </tbody>
          </table>
          <p>{t('replay.result.changedCount', { answered: totals.changed.now_answered, handoff: totals.changed.now_handoff, other: totals.changed.other_answer })}</p>
          <LlmLine name={t('replay.result.before')} s={totals.before} />
          <LlmLine name={t('replay.result.after')} s={totals.after} />
          <p className="muted">{t('replay.result.took', { seconds: (totals.elapsedMs / 1000).toFixed(1) })}</p>
          {run.rows.length === 0 ? (
            <p>{t('replay.result.none')}</p>
          ) : (
            <table className="grid replay-changes">
              <caption>{t('replay.result.changed')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('replay.result.question')}</th>
                  <th scope="col">{t('replay.result.before')}</th>
                  <th scope="col">{t('replay.result.after')}</th>
                </tr>
              </thead>
              <tbody>
                {run.rows.map((r) => (
                  <tr key={r.messageId} data-change={r.change}>
                    <th scope="row">
                      <div>{r.question}</div>
                      <small className="muted">
                        {r.clientId} · {t(`replay.result.change.${r.change}`)}
                      </small>
                    </th>
                    <td>
                      <Side side={r.before} />
                    </td>
                    <td>
                      <Side side={r.after} below={run.params.baseThreshold} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}

function candidate(t: (k: string, o?: Record<string, unknown>) => string, run: ReplayRunSummary): string {
  const p = run.params;
  const parts = [
    p.engine !== null ? t('replay.runs.engine', { name: p.engine }) : null,
    p.threshold !== null ? t('replay.runs.threshold', { value: p.threshold, was: p.baseThreshold }) : null,
    p.systemPrompt !== null ? t('replay.runs.prompt') : null,
    p.withProposals ? t('replay.runs.proposals') : null,
  ].filter((x) => x !== null);
  return parts.length ? parts.join(', ') : t('replay.runs.asNow');
}

function Runs() {
  const { t, i18n } = useTranslation();
  const runs = useConsole((s) => s.replayRuns);
  const show = useConsole((s) => s.showReplayRun);
  const headingId = useId();
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{t('replay.runs.title')}</h2>
      {runs.length === 0 ? (
        <p className="muted">{t('replay.runs.empty')}</p>
      ) : (
        <table className="grid replay-runs">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">{t('replay.runs.when')}</th>
              <th scope="col">{t('replay.runs.candidate')}</th>
              <th scope="col">{t('replay.runs.status')}</th>
              <th scope="col">{t('replay.runs.answered')}</th>
              <th scope="col">{t('replay.runs.changed')}</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  <button type="button" className="link" onClick={() => void show(r.id)} aria-label={t('replay.runs.show', { id: r.id })}>
                    {r.id}
                  </button>
                </td>
                <td>
                  <time dateTime={new Date(r.createdAt).toISOString()} title={fullTime(r.createdAt, i18n.language)}>
                    {shortTime(r.createdAt, i18n.language)}
                  </time>
                </td>
                <td>{candidate(t, r)}</td>
                <td>{t(`replay.result.status.${r.status}`)}</td>
                <td>{r.totals ? `${r.totals.before.answered} → ${r.totals.after.answered}` : '–'}</td>
                <td>{r.totals ? r.totals.changed.now_answered + r.totals.changed.now_handoff + r.totals.changed.other_answer : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** The admin's Replay view: past questions answered again with a change, before it goes live. */
export function Replay() {
  const { t } = useTranslation();
  const load = useConsole((s) => s.loadReplay);
  const run = useConsole((s) => s.replayRun);
  useEffect(() => void load(), [load]);
  return (
    <section className="admin replay" aria-label={t('replay.nav')}>
      <h1>{t('replay.title')}</h1>
      <p className="muted">{t('replay.intro')}</p>
      <Form />
      <Estimate />
      {run && <Result run={run} />}
      <Runs />
    </section>
  );
}

import type { StateCreator } from 'zustand';
import type { ConsoleInput, ConsoleOutputs, ReplayEstimate, ReplayRunSummary } from '../../../shared/console-api.ts';
import { REPLAY_LIMITS } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import type { ConsoleState } from './index.ts';
import { allowed } from './accounts-slice.ts';

/** The replay form as typed: empty strings mean "as now" (each client's engine, the server's threshold). */
export interface ReplayForm {
  since: string;
  clientId: string;
  engine: string;
  threshold: string;
  systemPrompt: string;
  withProposals: boolean;
  concurrency: number;
}

export const DEFAULT_REPLAY_FORM: ReplayForm = { since: '7d', clientId: '', engine: '', threshold: '', systemPrompt: '', withProposals: false, concurrency: REPLAY_LIMITS.concurrencyDefault };

/** How often a running replay is asked how far it got. */
const POLL_MS = 500;

export interface ReplaySlice {
  replayForm: ReplayForm;
  setReplayForm(form: ReplayForm): void;
  /** Engine names to choose from ("kb" and the configured ones). */
  replayEngines: string[];
  /** The estimate of what the form asks for: shown before a run, which needs it confirmed. */
  replayEstimate: ReplayEstimate | null;
  replayBusy: boolean;
  replayRuns: ReplayRunSummary[];
  /** The run shown: its totals and changed questions (or its progress while it runs). */
  replayRun: ConsoleOutputs['getReplayRun'] | null;
  loadReplay(): Promise<void>;
  estimateReplay(): Promise<void>;
  /** Runs what was estimated (the confirm step), then follows it until it ends. */
  startReplay(): Promise<void>;
  cancelReplay(): Promise<void>;
  showReplayRun(id: number): Promise<void>;
  dismissReplayEstimate(): void;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

export function replayRequest(form: ReplayForm): ConsoleInput<'startReplay'> {
  const threshold = form.threshold.trim() === '' ? undefined : Number(form.threshold);
  return {
    since: form.since,
    ...(form.clientId ? { clientId: form.clientId } : {}),
    ...(form.engine ? { engine: form.engine } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
    ...(form.systemPrompt.trim() ? { systemPrompt: form.systemPrompt.trim() } : {}),
    withProposals: form.withProposals,
    concurrency: form.concurrency,
  };
}

export const replaySlice: Slice<ReplaySlice> = (set, get) => {
  let polling: ReturnType<typeof setTimeout> | null = null;
  async function follow(id: number): Promise<void> {
    if (polling) clearTimeout(polling);
    polling = null;
    const r = await api.getReplayRun({ id });
    if (!r.ok) return set({ error: r.error.message });
    set({ replayRun: r.value });
    if (r.value.status === 'running') {
      polling = setTimeout(() => void follow(id), POLL_MS);
      return;
    }
    await get().loadReplay();
  }
  return {
    replayForm: DEFAULT_REPLAY_FORM,
    setReplayForm: (replayForm) => set({ replayForm, replayEstimate: null }),
    replayEngines: [],
    replayEstimate: null,
    replayBusy: false,
    replayRuns: [],
    replayRun: null,
    async loadReplay() {
      if (!allowed(get(), 'listReplayRuns')) return;
      const [runs, engines] = await Promise.all([api.listReplayRuns({}), api.listEngines({})]);
      if (!runs.ok) return set({ error: runs.error.message });
      set({ replayRuns: runs.value, ...(engines.ok ? { replayEngines: engines.value.map((e) => e.name) } : {}) });
      const running = runs.value.find((r) => r.status === 'running' && r.progress);
      if (running && !polling && get().replayRun?.id !== running.id) void follow(running.id);
    },
    async estimateReplay() {
      set({ replayBusy: true, replayEstimate: null });
      const r = await api.estimateReplay(replayRequest(get().replayForm));
      set({ replayBusy: false, ...(r.ok ? { replayEstimate: r.value, error: null } : { error: r.error.message }) });
    },
    async startReplay() {
      set({ replayBusy: true });
      const r = await api.startReplay(replayRequest(get().replayForm));
      set({ replayBusy: false, replayEstimate: null });
      if (!r.ok) return set({ error: r.error.message });
      await follow(r.value.runId);
    },
    async cancelReplay() {
      const run = get().replayRun;
      if (!run) return;
      const r = await api.cancelReplay({ id: run.id });
      if (!r.ok) set({ error: r.error.message });
    },
    async showReplayRun(id) {
      await follow(id);
    },
    dismissReplayEstimate: () => set({ replayEstimate: null }),
  };
};

import type { StateCreator } from 'zustand';
import type { ApiResult, ConsoleOutputs, TranscriptEntry } from '../../../shared/console-api.ts';
import { api } from '../api/bridge.ts';
import { loadTimeoutMs, withTimeout } from '../api/timing.ts';
import type { ConsoleState } from './index.ts';
import { TRANSCRIPT_PAGE } from './conversations-slice.ts';

type Transcript = ConsoleOutputs['getTranscript'];

export interface TranscriptSlice {
  transcript: Transcript | null;
  /**
   * The conversation being opened while its transcript is not shown yet: loading, or why it could
   * not be loaded (the service did not answer in time, or refused). Null once it is shown.
   */
  transcriptLoad: { id: string; error: string | null } | null;
  /** The next older page, appended in front: only the messages before the first one shown are read. */
  loadEarlier(): Promise<void>;
  /** The newest page (on open, after a write, on a live event), keeping the older pages already shown. */
  loadTranscript(): Promise<void>;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

const firstMessageId = (entries: readonly TranscriptEntry[]): number | undefined => entries.find((e) => e.kind === 'message')?.id;

/**
 * The newest page on top of what was shown. Pages tile by message id (a page holds messages below
 * its `beforeId` and the replies that follow them), so the older entries to keep are those before
 * the new page's first message. If the new page does not reach the shown ones (more than a page
 * arrived since), older pages are dropped rather than shown with a hole.
 */
export function mergeNewest(shown: Transcript | null, newest: Transcript): Transcript {
  const first = firstMessageId(newest.entries);
  if (!shown || shown.conversation.id !== newest.conversation.id || first === undefined) return newest;
  const at = shown.entries.findIndex((e) => e.kind === 'message' && e.id === first);
  if (at <= 0) return newest;
  return { ...newest, entries: [...shown.entries.slice(0, at), ...newest.entries], hasEarlier: shown.hasEarlier };
}

export const transcriptSlice: Slice<TranscriptSlice> = (set, get) => ({
  transcript: null,
  transcriptLoad: null,
  async loadEarlier() {
    const shown = get().transcript;
    const before = shown ? firstMessageId(shown.entries) : undefined;
    if (!shown || before === undefined) return;
    const id = shown.conversation.id;
    const r = await api.getTranscript({ conversationId: id, limit: TRANSCRIPT_PAGE, beforeId: before });
    if (!r.ok) return set({ error: r.error.message });
    const now = get().transcript;
    // Another conversation was opened, or a reload replaced the page meanwhile: this page no longer fits.
    if (get().selectedId !== id || !now || firstMessageId(now.entries) !== before) return;
    set({ transcript: { ...now, entries: [...r.value.entries, ...now.entries], hasEarlier: r.value.hasEarlier } });
  },
  async loadTranscript() {
    const id = get().selectedId;
    if (!id) return;
    // Opening (nothing of it shown yet): say it is loading, and give up after a while with a Retry.
    const opening = get().transcript?.conversation.id !== id;
    if (opening) set({ transcriptLoad: { id, error: null } });
    const ms = loadTimeoutMs();
    const late = (): ApiResult<Transcript> => ({ ok: false, error: { code: 'unreachable', message: `the service did not answer within ${Math.round(ms / 1000)} s` } });
    const r = await withTimeout(api.getTranscript({ conversationId: id, limit: TRANSCRIPT_PAGE }), ms, late);
    if (get().selectedId !== id) return;
    if (r.ok) set({ transcript: mergeNewest(get().transcript, r.value), transcriptLoad: null });
    else if (get().transcript?.conversation.id !== id) set({ transcriptLoad: { id, error: r.error.message } });
    else set({ error: r.error.message });
  },
});

import type { StateCreator } from 'zustand';
import { DELIVERY_PROBLEM_STATES, type ApiResult, type DeliveryItem, type DeliveryNow, type DeliveryViewState } from '../../../shared/console-api.ts';
import { deliveryStatus, tryStatus, type DeliveryStatus } from '../../../shared/console-display.ts';
import { api } from '../api/bridge.ts';
import { operatorWrite } from './operator-write.ts';
import type { ConsoleState } from './index.ts';
import { allowed } from './accounts-slice.ts';

/** How a retried delivery's next attempt went; `sending` until it is recorded, `waiting` once we stopped looking. */
export type RetryResult =
  | { kind: 'sending' }
  | { kind: 'delivered' }
  | { kind: 'failed'; status: DeliveryStatus; dead: boolean }
  | { kind: 'cancelled' }
  | { kind: 'waiting' };

export interface Retried {
  /** Its attempts when it was retried: the next one is the retry's result. */
  baseline: number;
  result: RetryResult;
  /** When it was retried (this machine's time). */
  at: number;
}

/**
 * A cancel, and when a try was already on the wire, how that try ended: watched as a retry is,
 * so the status line stops saying the receiver "may still get it" once the answer is recorded.
 */
export interface CancelNotice {
  kind: 'cancel';
  id: number;
  /** Whose reply it was: a later action replaces the line, so it says which one it is about. */
  who: string | null;
  tryOnTheWire: boolean;
  /** Attempts recorded before the cancel: the try on the wire is the next one. */
  baseline: number;
  /** null while that try is not recorded (or there was none); `waiting` once we stopped looking. */
  outcome: RetryResult | null;
  at: number;
}

export interface DeliveriesSlice {
  deliveries: DeliveryItem[];
  deliveriesLoaded: boolean;
  deliveryFilter: { clientId?: string; states: DeliveryViewState[] };
  setDeliveryFilter(patch: Partial<DeliveriesSlice['deliveryFilter']>): void;
  /**
   * Reloads the list. Rows already shown keep their places (a live reload must not move the row
   * under the agent's pointer); `fresh` takes the service's order (the view opened, a new filter, Refresh).
   */
  loadDeliveries(options?: { fresh?: boolean }): Promise<void>;
  /**
   * Retry (dead ones start over) and Retry now (retrying ones go at once): these, or every dead one
   * of the filtered client. Resolves to the ids retried, or null when nothing was asked of the service.
   */
  retryDeliveries(ids?: number[]): Promise<number[] | null>;
  /** Never sends it. What the service said, or null when it refused (the error is shown). `who`: the conversation's name, for the status line. */
  cancelDelivery(id: number, who?: string): Promise<{ tryOnTheWire: boolean } | null>;
  /** Retried deliveries by id, with how their next attempt went (watched until it is recorded). */
  retried: Record<number, Retried>;
  /**
   * The Deliveries view's status line: the latest retry (its deliveries, whose results it sums up
   * as they settle) or cancel. A fresh load of the list clears it, except a cancel whose try on
   * the wire is not recorded yet.
   */
  deliveryNotice: { kind: 'retry'; ids: number[] } | CancelNotice | null;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

/** Past this, a retried delivery still not tried (held behind another) is "still waiting": no more looking. */
export const RETRY_WATCH_MS = 10 * 60_000;
/** Looked at this often even without a live event (one missed in a reconnect, say). */
const RETRY_POLL_MS = 2_000;

/** What the retry came to, or null while its attempt is not recorded. */
export function retryResult(d: DeliveryNow, baseline: number): RetryResult | null {
  if (d.state === 'cancelled') return { kind: 'cancelled' };
  if (d.attempts <= baseline) return null;
  return d.state === 'sent' ? { kind: 'delivered' } : { kind: 'failed', status: deliveryStatus(d), dead: d.state === 'dead' };
}

/** How the try that was on the wire when the delivery was cancelled ended, or null while it is not recorded. */
export function onTheWireResult(d: DeliveryNow, baseline: number): RetryResult | null {
  if (d.attempts <= baseline) return null;
  // The cancel stands either way; 'sent' means the receiver accepted that last try. The row keeps
  // the cancel's reason, so the try's own answer comes from its attempt record.
  if (d.state === 'sent') return { kind: 'delivered' };
  return { kind: 'failed', status: tryStatus(d.lastTry?.status ?? null, d.lastTry?.error ?? null), dead: false };
}

/** The new rows first (in the service's order), then those already shown, where they were. */
export function keepOrder(shown: readonly DeliveryItem[], next: readonly DeliveryItem[]): DeliveryItem[] {
  const place = new Map(shown.map((d, i) => [d.id, i]));
  const known = next.filter((d) => place.has(d.id)).sort((a, b) => place.get(a.id)! - place.get(b.id)!);
  return [...next.filter((d) => !place.has(d.id)), ...known];
}

export const deliveriesSlice: Slice<DeliveriesSlice> = (set, get, store) => {
  const asOperator = <T>(run: () => Promise<ApiResult<T>>, again: () => Promise<unknown>): Promise<T | null> => operatorWrite(get, set, run, again);

  /** After a retry or a cancel: the list and the open transcript show what it changed. */
  const reloadShown = async (): Promise<void> => {
    const s = get();
    await Promise.all([s.view === 'deliveries' ? s.loadDeliveries() : null, s.transcript ? s.loadTranscript() : null]);
  };

  let stopWatching: (() => void) | null = null;
  let checking = false;
  let checkAgain = false;

  /** Asks where the retried deliveries still sending stand; reloads what shows them once one settled. */
  async function check(): Promise<void> {
    if (checking) return void (checkAgain = true);
    checking = true;
    try {
      const now = Date.now();
      const cancel = watchedCancel();
      const retrying = Object.entries(get().retried).flatMap(([id, r]) => (r.result.kind === 'sending' ? [Number(id)] : []));
      const open = cancel && !retrying.includes(cancel.id) ? [...retrying, cancel.id] : retrying;
      if (open.length === 0) return stopWatching?.();
      const r = await api.getDeliveries({ ids: open });
      if (!r.ok) return;
      const found = new Map(r.value.map((d) => [d.id, d]));
      let settled = false;
      set((s) => {
        let retried = s.retried;
        let deliveryNotice = s.deliveryNotice;
        if (cancel && deliveryNotice === cancel) {
          const d = found.get(cancel.id);
          const outcome = d ? onTheWireResult(d, cancel.baseline) : null;
          if (outcome) settled = true;
          const late = now - cancel.at > RETRY_WATCH_MS;
          if (outcome || late) deliveryNotice = { ...cancel, outcome: outcome ?? { kind: 'waiting' } };
        }
        for (const id of retrying) {
          const entry = retried[id];
          if (entry?.result.kind !== 'sending') continue;
          const d = found.get(id);
          const result = d ? retryResult(d, entry.baseline) : { kind: 'cancelled' as const };
          if (result) settled = true;
          const next = result ?? (now - entry.at > RETRY_WATCH_MS ? { kind: 'waiting' as const } : null);
          // Unchanged entries keep the same object: the view re-renders only when one settles.
          if (next) retried = { ...retried, [id]: { ...entry, result: next } };
        }
        return { retried, deliveryNotice };
      });
      if (settled) {
        const s = get();
        if (s.view === 'deliveries') void s.loadDeliveries();
        if (s.transcript && open.some((id) => found.get(id)?.conversationId === s.transcript?.conversation.id)) void s.loadTranscript();
      }
      if (!Object.values(get().retried).some((x) => x.result.kind === 'sending') && !watchedCancel()) stopWatching?.();
    } finally {
      checking = false;
      if (checkAgain) {
        checkAgain = false;
        void check();
      }
    }
  }

  /** The status line's cancel while the try it could not call back is not recorded. */
  function watchedCancel(): CancelNotice | null {
    const n = get().deliveryNotice;
    return n?.kind === 'cancel' && n.tryOnTheWire && n.outcome === null ? n : null;
  }

  /** Live events reload the conversation list (and the open transcript): each may be a retried delivery's attempt. */
  function watch(): void {
    if (stopWatching) return;
    const unsubscribe = store.subscribe((s, before) => {
      if (s.conversations !== before.conversations || s.transcript !== before.transcript) void check();
    });
    const timer = setInterval(() => void check(), RETRY_POLL_MS);
    stopWatching = () => {
      unsubscribe();
      clearInterval(timer);
      stopWatching = null;
    };
  }

  return {
    deliveries: [],
    deliveriesLoaded: false,
    deliveryFilter: { states: [...DELIVERY_PROBLEM_STATES] },
    setDeliveryFilter(patch) {
      set((s) => ({ deliveryFilter: { ...s.deliveryFilter, ...patch } }));
      void get().loadDeliveries({ fresh: true });
    },
    async loadDeliveries(options = {}) {
      if (!allowed(get(), 'listDeliveries')) return;
      const { clientId, states } = get().deliveryFilter;
      const r = await api.listDeliveries({ clientId, states, limit: 1000 });
      if (!r.ok) return set({ error: r.error.message });
      // A filter changed while this was on its way: the newer load shows the list.
      if (get().deliveryFilter.clientId !== clientId || get().deliveryFilter.states !== states) return;
      // A new list starts with a quiet status line, except for a cancel whose try on the wire is still
      // out: that line is about one delivery, and says how its try ended once it is recorded.
      if (options.fresh) set((s) => ({ deliveries: r.value, deliveriesLoaded: true, deliveryNotice: s.deliveryNotice === watchedCancel() ? s.deliveryNotice : null }));
      else set((s) => ({ deliveries: s.deliveriesLoaded ? keepOrder(s.deliveries, r.value) : r.value, deliveriesLoaded: true }));
    },
    async retryDeliveries(ids) {
      const clientId = get().deliveryFilter.clientId;
      const r = await asOperator(() => api.retryDeliveries(ids ? { ids } : { clientId }), () => get().retryDeliveries(ids));
      if (r) {
        const at = Date.now();
        set((s) => {
          // Results older than a retry watch are forgotten: a row shows what happened lately.
          const retried = Object.fromEntries(Object.entries(s.retried).filter(([, x]) => at - x.at < RETRY_WATCH_MS));
          for (const d of r.deliveries) retried[d.id] = { baseline: d.attempts, result: { kind: 'sending' }, at };
          // A retry while earlier ones are still sending adds to their summary (a second Retry now must
          // not hide how the first went); once they have all settled, the next retry starts its own.
          const shown = s.deliveryNotice?.kind === 'retry' ? s.deliveryNotice.ids.filter((id) => id in retried) : [];
          const earlier = shown.some((id) => s.retried[id]?.result.kind === 'sending') ? shown : [];
          const ids = [...new Set([...earlier, ...r.deliveries.map((d) => d.id)])];
          return { retried, deliveryNotice: { kind: 'retry', ids } };
        });
        if (r.deliveries.length) watch();
      }
      await reloadShown();
      return r && r.deliveries.map((d) => d.id);
    },
    async cancelDelivery(id, who) {
      const r = await asOperator(() => api.cancelDelivery({ deliveryId: id }), () => get().cancelDelivery(id, who));
      if (r) {
        set({ deliveryNotice: { kind: 'cancel', id, who: who ?? null, tryOnTheWire: r.tryOnTheWire, baseline: r.attempts, outcome: null, at: Date.now() } });
        if (r.tryOnTheWire) watch();
      }
      await reloadShown();
      return r;
    },
    retried: {},
    deliveryNotice: null,
  };
};

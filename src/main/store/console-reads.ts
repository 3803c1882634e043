import type { Store } from './index.ts';

/**
 * The console's reads that can take long on a big store (lists and message search, transcripts,
 * dashboard counts, request log, deliveries): the read thread runs them (src/main/reader-worker.ts),
 * so the main thread keeps serving ingest. Plain data in and out. Entries point at the store's own
 * functions, so their parameter and result types are the store's: a change there flows through.
 * A read that runs several statements is one entry: on the read thread it is one snapshot.
 */
export function consoleReads(store: Store) {
  return {
    conversations: store.console.conversations,
    conversationsByIds: (ids: readonly string[]) => ids.flatMap((id) => store.console.conversation(id) ?? []),
    /** The transcript page and what the console shows around it; null for an unknown conversation. */
    transcriptPage(conversationId: string, limit: number, beforeId?: number) {
      const conversation = store.console.conversation(conversationId);
      if (!conversation) return null;
      const entries = store.console.transcript(conversationId, limit, beforeId);
      const first = entries.find((e) => e.kind === 'message');
      return {
        conversation,
        entries,
        hasEarlier: first !== undefined && store.console.hasEarlier(conversationId, first.id),
        latestAutoSendUrl: conversation.channel === 'im' ? store.workspace.latestAutoSendUrl(conversationId) : null,
      };
    },
    dashboard: (since: number) => ({ series: store.stats.series(since), deliveries: store.deliveries.countByState(), needsHuman: store.stats.needsHuman() }),
    /** Log rows with who each row's conversation is with: one snapshot, one batch read of the names. */
    requestLog(filter: Parameters<Store['requestLog']['filtered']>[0]) {
      const rows = store.requestLog.filtered(filter);
      return { rows, labels: store.conversations.labels(rows.flatMap((r) => r.conversationId ?? [])) };
    },
    deliveryProblems(...args: Parameters<Store['deliveries']['problems']>) {
      const rows = store.deliveries.problems(...args);
      return { rows, labels: store.conversations.labels(rows.map((d) => d.conversationId)) };
    },
    audit: store.audit.list,
  };
}

export type ConsoleReads = ReturnType<typeof consoleReads>;

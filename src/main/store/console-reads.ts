import type { Store } from './index.ts';
import type { Reader } from './team.ts';

/**
 * The console's reads that can take long on a big store (lists and message search, transcripts,
 * dashboard counts, request log, deliveries): the read thread runs them (src/main/reader-worker.ts),
 * so the main thread keeps serving ingest. Plain data in and out. Entries point at the store's own
 * functions, so their parameter and result types are the store's: a change there flows through.
 * A read that runs several statements is one entry: on the read thread it is one snapshot.
 */
/** The customer a delivery answers (protocol section 7: `to_user_id`), read from its stored message_info. */
function recipientOf(messageInfo: string): string | null {
  try {
    const to = (JSON.parse(messageInfo) as Record<string, unknown>)['to_user_id'];
    return typeof to === 'string' && to !== '' ? to : null;
  } catch {
    return null;
  }
}

export function consoleReads(store: Store) {
  return {
    conversations: store.console.conversations,
    conversationsByIds: (ids: readonly string[], reader: Reader | null = null) => ids.flatMap((id) => store.console.conversation(id, reader) ?? []),
    /** The transcript page and what the console shows around it (unread counts `reader`'s); null for an unknown conversation. */
    transcriptPage(conversationId: string, limit: number, beforeId?: number, reader: Reader | null = null) {
      const conversation = store.console.conversation(conversationId, reader);
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
    /** One message's whole stored message_info, as text: it may be megabytes, so only on demand. */
    messageInfo: (id: number) => store.messages.storedInfo(id) ?? null,
    dashboard: (since: number) => ({ series: store.stats.series(since), deliveries: store.deliveries.countByState(), needsHuman: store.stats.needsHuman() }),
    /** Log rows with who each row's conversation is with: one snapshot, one batch read of the names. */
    requestLog(filter: Parameters<Store['requestLog']['filtered']>[0]) {
      const rows = store.requestLog.filtered(filter);
      return { rows, labels: store.conversations.labels(rows.flatMap((r) => r.conversationId ?? [])) };
    },
    /** Problem deliveries, who each conversation is with, and whom each reply was for (to_user_id, by name). */
    deliveryProblems(...args: Parameters<Store['deliveries']['problems']>) {
      const rows = store.deliveries.problems(...args);
      const to = new Map(rows.map((d) => [d.id, recipientOf(d.messageInfo)]));
      const names = new Map<string, Map<string, string>>();
      for (const clientId of new Set(rows.map((d) => d.clientId))) {
        names.set(clientId, store.people.names(clientId, rows.flatMap((d) => (d.clientId === clientId ? (to.get(d.id) ?? []) : []))));
      }
      const recipients = Object.fromEntries(
        rows.flatMap((d) => {
          const id = to.get(d.id);
          return id ? [[d.id, { id, name: names.get(d.clientId)?.get(id) ?? null }]] : [];
        }),
      );
      return { rows, labels: store.conversations.labels(rows.map((d) => d.conversationId)), recipients };
    },
    audit: store.audit.search,
  };
}

export type ConsoleReads = ReturnType<typeof consoleReads>;

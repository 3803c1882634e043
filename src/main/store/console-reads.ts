import type { Store } from './index.ts';
import type { StoreContract } from './contract.ts';
import type { Reader } from './team.ts';

/**
 * The console's reads that can take long on a big store (lists and message search, transcripts,
 * dashboard counts, request log, deliveries): the read thread runs them (src/main/reader-worker.ts),
 * so the main thread keeps serving ingest. Plain data in and out. Entries point at the store's own
 * functions, so their parameter and result types are the store's: a change there flows through.
 * A read that runs several statements is one entry: on the read thread it is one snapshot. Written
 * against the store contract (every call awaited), so a PostgreSQL node serves the same reads.
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

export function consoleReads(store: StoreContract) {
  return {
    conversations: async (...args: Parameters<Store['console']['conversations']>) => store.console.conversations(...args),
    async conversationsByIds(ids: readonly string[], reader: Reader | null = null) {
      const found = [];
      for (const id of ids) {
        const c = await store.console.conversation(id, reader);
        if (c) found.push(c);
      }
      return found;
    },
    /** The transcript page and what the console shows around it (unread counts `reader`'s); null for an unknown conversation. */
    async transcriptPage(conversationId: string, limit: number, beforeId?: number, reader: Reader | null = null) {
      const conversation = await store.console.conversation(conversationId, reader);
      if (!conversation) return null;
      const entries = await store.console.transcript(conversationId, limit, beforeId);
      const first = entries.find((e) => e.kind === 'message');
      return {
        conversation,
        entries,
        hasEarlier: first !== undefined && (await store.console.hasEarlier(conversationId, first.id)),
        latestAutoSendUrl: conversation.channel === 'im' ? await store.workspace.latestAutoSendUrl(conversationId) : null,
      };
    },
    /** One message's whole stored message_info, as text: it may be megabytes, so only on demand. */
    messageInfo: async (id: number) => (await store.messages.storedInfo(id)) ?? null,
    dashboard: async (since: number) => ({ series: await store.stats.series(since), deliveries: await store.deliveries.countByState(), needsHuman: await store.stats.needsHuman() }),
    /** Log rows with who each row's conversation is with: one snapshot, one batch read of the names. */
    async requestLog(filter: Parameters<Store['requestLog']['filtered']>[0]) {
      const rows = await store.requestLog.filtered(filter);
      return { rows, labels: await store.conversations.labels(rows.flatMap((r) => r.conversationId ?? [])) };
    },
    /** Problem deliveries, who each conversation is with, and whom each reply was for (to_user_id, by name). */
    async deliveryProblems(...args: Parameters<Store['deliveries']['problems']>) {
      const rows = await store.deliveries.problems(...args);
      const to = new Map(rows.map((d) => [d.id, recipientOf(d.messageInfo)]));
      const names = new Map<string, Map<string, string>>();
      for (const clientId of new Set(rows.map((d) => d.clientId))) {
        names.set(clientId, await store.people.names(clientId, rows.flatMap((d) => (d.clientId === clientId ? (to.get(d.id) ?? []) : []))));
      }
      const recipients = Object.fromEntries(
        rows.flatMap((d) => {
          const id = to.get(d.id);
          return id ? [[d.id, { id, name: names.get(d.clientId)?.get(id) ?? null }]] : [];
        }),
      );
      return { rows, labels: await store.conversations.labels(rows.map((d) => d.conversationId)), recipients };
    },
    audit: async (...args: Parameters<Store['audit']['search']>) => store.audit.search(...args),
  };
}

export type ConsoleReads = ReturnType<typeof consoleReads>;

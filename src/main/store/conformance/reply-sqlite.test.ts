import { describe } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../db.ts';
import { createStore } from '../index.ts';
import { executeIngest } from '../../conversations/ingest-commands.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { CLIENT, T0 } from './ingest-conformance.ts';
import { replyConformance, type ReplyHarness } from './reply-conformance.ts';

async function open(): Promise<ReplyHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-reply-conformance-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  store.clients.create(CLIENT, DEFAULT_CLIENT_SETTINGS, T0);
  return {
    ingest: (command) => store.transactionAsync(() => executeIngest(store, command)),
    store,
    transaction: (work) => store.transactionAsync(() => work(store)),
    delivery: async (id) => {
      const d = store.deliveries.get(id);
      return d && { kind: d.kind, replyId: d.replyId, state: d.state, origin: d.origin, sendUrl: d.sendUrl, messageInfo: d.messageInfo, nextAttemptAt: d.nextAttemptAt, createdAt: d.createdAt, updatedAt: d.updatedAt };
    },
    trace: async (messageId) => {
      const t = store.messages.replyTrace(messageId);
      return t && { outcome: t.outcome, replyMsgId: t.replyMsgId, note: t.note };
    },
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('auto reply store conformance: SQLite', () => replyConformance(open));

import { describe } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../db.ts';
import { createStore } from '../index.ts';
import { executeIngest } from '../../conversations/ingest-commands.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../../shared/client-settings.ts';
import { CLIENT, ingestConformance, T0, type IngestHarness } from './ingest-conformance.ts';

// The SQLite store as the writer thread runs it: each command in a transaction of its own.
async function open(): Promise<IngestHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-conformance-'));
  const store = createStore(openDatabase(join(dir, 'switchboard.db')));
  store.clients.create(CLIENT, DEFAULT_CLIENT_SETTINGS, T0);
  return {
    run: (command) => store.transactionAsync(() => executeIngest(store, command)),
    store,
    count: async (table) => Number((store.connection.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n),
    logged: async (requestId) => {
      const r = store.connection.prepare('SELECT count, last_at, agg_key FROM request_log WHERE request_id = ?').get(requestId) as { count: number; last_at: number | null; agg_key: string | null } | undefined;
      return r && { count: r.count, lastAt: r.last_at, aggKey: r.agg_key };
    },
    close: async () => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('ingest conformance: SQLite', () => ingestConformance(open));

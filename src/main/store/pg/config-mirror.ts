import { z } from 'zod';
import type { ClientRow, SecretRow } from '../clients.ts';
import type { EngineRow } from '../engines.ts';
import { phrasingsSchema } from '../kb.ts';
import { int8, type PgQueryable } from './pool.ts';
import { pgClientRow, pgEngineRow, pgSecretRow } from './client-queries.ts';

type KbRow = { id: number; question: string; answer: string; phrasings: string[] };

const kbSchema = z.object({ id: int8, question: z.string(), answer: z.string(), phrasings: z.unknown() });
const settingSchema = z.object({ key: z.string(), value: z.string() });

/** How often a node looks for changes made by another node or the CLI. */
export const MIRROR_REFRESH_MS = 1000;

/**
 * The small tables a node reads on every request or answer, kept in its memory (issue 30): the
 * clients and their active secrets (every signature check), the engines, the settings (the
 * knowledge-base threshold), and the knowledge base (every built-in answer). SQLite reads them in
 * this thread at no cost; across the network, one round trip per request would put PostgreSQL's
 * latency on every message. A refresh reads them again (the knowledge base only when its version
 * counter moved) at most once a second, and at once when a request names a client this node does
 * not know yet, so a client added from the CLI on any machine is served within a second.
 *
 * The synchronous views are the SQLite queries' shapes, so the client registry, the engine router
 * and the knowledge index run unchanged on top of them.
 */
export function createConfigMirror(db: PgQueryable, log: (line: string) => void = () => {}) {
  let clients: ClientRow[] = [];
  let secrets = new Map<string, SecretRow[]>();
  let engines = new Map<string, EngineRow>();
  let settings = new Map<string, string>();
  let kb: KbRow[] = [];
  let kbVersion = -1;
  /** Bumped when a refresh found clients, secrets, engines or settings changed. */
  let version = 0;
  let fingerprint = '';
  let refreshing: Promise<void> | null = null;
  /** The one refresh that starts when the one in flight ends, shared by every caller who asked meanwhile. */
  let queued: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  async function load(): Promise<void> {
    const [c, s, e, st, v] = await Promise.all([
      db.query('SELECT id, enabled, settings, created_at, updated_at FROM clients ORDER BY id'),
      db.query('SELECT id, client_id, sealed, hint, created_at FROM client_secrets WHERE retired_at IS NULL ORDER BY id DESC'),
      db.query('SELECT name, kind, config, api_key_sealed, updated_at FROM engines ORDER BY name'),
      db.query('SELECT key, value FROM settings ORDER BY key'),
      db.query('SELECT n FROM kb_version'),
    ]);
    const print = JSON.stringify([c.rows, s.rows, e.rows, st.rows]);
    if (print !== fingerprint) {
      clients = c.rows.map(pgClientRow);
      const bySecret = new Map<string, SecretRow[]>();
      for (const raw of s.rows) {
        const r = pgSecretRow(raw);
        const list = bySecret.get(r.clientId) ?? [];
        list.push(r);
        bySecret.set(r.clientId, list);
      }
      secrets = bySecret;
      engines = new Map(e.rows.map((raw) => {
        const r = pgEngineRow(raw);
        return [r.name, r];
      }));
      settings = new Map(st.rows.map((raw) => {
        const r = settingSchema.parse(raw);
        return [r.key, r.value];
      }));
      fingerprint = print;
      version++;
    }
    const n = int8.parse((v.rows[0] as { n: unknown } | undefined)?.n ?? 0);
    if (n !== kbVersion) {
      // Read after the counter: an edit in between bumps it again and the next refresh reads the entries anew.
      const rows = await db.query('SELECT id, question, answer, phrasings FROM kb_entries ORDER BY id');
      kb = rows.rows.map((raw) => {
        const r = kbSchema.parse(raw);
        return { id: r.id, question: r.question, answer: r.answer, phrasings: phrasingsSchema.parse(r.phrasings) };
      });
      kbVersion = n;
    }
  }

  /**
   * Resolves after a read that started after this call. Joining a read already under way is not
   * enough: its SELECTs may have run before the change the caller knows of (a client the CLI added
   * a moment ago), and the request would be refused as unknown. Callers who ask during one read
   * share the next, so a stream of unknown client ids costs one read at a time.
   */
  function refresh(): Promise<void> {
    if (!refreshing) {
      refreshing = load().finally(() => {
        refreshing = null;
      });
      return refreshing;
    }
    queued ??= refreshing.catch(() => {}).then(() => {
      queued = null;
      return refresh();
    });
    return queued;
  }

  const kbVersionBytes = (): Uint8Array => {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, kbVersion);
    return bytes;
  };

  return {
    /** Reads everything; a node starts serving after this resolves. */
    refresh,
    /** Refreshes every MIRROR_REFRESH_MS until stop; a failed refresh keeps the last good copy and says why once per failure streak. */
    start(): void {
      let failing = false;
      const tick = (): void => {
        timer = setTimeout(() => {
          refresh().then(
            () => {
              if (failing) log('configuration mirror: PostgreSQL answers again');
              failing = false;
            },
            (error: unknown) => {
              if (!failing) log(`configuration mirror: refresh failed, serving the last copy: ${(error as Error).message}`);
              failing = true;
            },
          ).finally(() => {
            if (timer) tick();
          });
        }, MIRROR_REFRESH_MS);
        timer.unref();
      };
      tick();
    },
    stop(): void {
      if (timer) clearTimeout(timer);
      timer = null;
    },
    clients: {
      list: (): ClientRow[] => clients,
      activeSecrets: (clientId: string): SecretRow[] => secrets.get(clientId) ?? [],
    },
    engines: { get: (name: string): EngineRow | undefined => engines.get(name) },
    settings: {
      get: (key: string): string | undefined => settings.get(key),
      /** Changes when a refresh saw clients, secrets, engines or settings change (SQLite's data_version, for the registry). */
      dataVersion: (): number => version,
    },
    kb: { all: (): KbRow[] => kb, version: kbVersionBytes },
    /** The sealed values this node must open (serve's key check at start): active client secrets and engine keys. */
    sealedValues: (): Array<{ label: string; sealed: string }> => [
      ...[...secrets.values()].flat().map((s) => ({ label: `client ${s.clientId} secret …${s.hint}`, sealed: s.sealed })),
      ...[...engines.values()].flatMap((e) => (e.apiKeySealed ? [{ label: `engine ${e.name} API key`, sealed: e.apiKeySealed }] : [])),
    ],
  };
}

export type ConfigMirror = ReturnType<typeof createConfigMirror>;

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliOk } from '../lib.ts';
import { knowledgeBase } from '../kb-data.ts';
import { loadHistory, type LoadResult } from './loader.ts';
import type { ScaleShape } from './scenario.ts';

/** Bump when the loader or scenario changes what it writes: cached stores of older versions are rebuilt. */
export const LOADER_VERSION = 1;
/** The history ends when the build starts; past this age a cached store is rebuilt (idempotency records expire at 48 h). */
const MAX_AGE_MS = 20 * 3_600_000;
export const SCALE_CLIENT = 'scale';
const KB_ENTRIES = 1000;

export interface BuiltStore {
  /** The cached data dir: never served from; copy it first (see `copyStore`). */
  dir: string;
  secret: string;
  builtAt: number;
  /** null when the store came from the cache. */
  build: LoadResult | null;
  load: LoadResult;
}

/** A fresh data dir as the bench sets one up: rate limit lifted, one client, the 1,000-entry knowledge base. */
export function prepareDataDir(dir: string, sendUrl: string): { secret: string; kb: Array<{ question: string; answer: string }> } {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ rateLimit: { perSecond: 1e9, burst: 1e9 } }));
  const secret = /^secret: (\S+)$/m.exec(cliOk(dir, 'clients', 'add', SCALE_CLIENT, '--send-url', sendUrl))?.[1];
  if (!secret) throw new Error('could not add the scale client');
  const kb = knowledgeBase(KB_ENTRIES);
  writeFileSync(join(dir, 'kb.json'), JSON.stringify(kb));
  cliOk(dir, 'kb', 'import', join(dir, 'kb.json'));
  return { secret, kb };
}

/** The store of `shape`, from the cache under os.tmpdir() when a fresh enough one of this loader version is there. */
export async function scaleStore(shape: ScaleShape, log: (line: string) => void = () => {}): Promise<BuiltStore> {
  const dir = join(process.env['BENCH_SCALE_CACHE'] ?? tmpdir(), `switchboard-scale-v${LOADER_VERSION}-${shape.entries}-${shape.conversations}-${shape.longConversation}`);
  const meta = join(dir, 'scale-build.json');
  if (existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as { secret: string; builtAt: number; load: LoadResult };
    if (Date.now() - m.builtAt < MAX_AGE_MS) return { dir, secret: m.secret, builtAt: m.builtAt, build: null, load: m.load };
    log(`cached store ${dir} is older than ${MAX_AGE_MS / 3_600_000} h: rebuilding`);
  }
  rmSync(dir, { recursive: true, force: true });
  const work = mkdtempSync(`${dir}.building-`);
  try {
    // Port 9 (discard) is a placeholder: the bench points the client at its own receiver on each copy.
    const { secret, kb } = prepareDataDir(work, 'http://127.0.0.1:9/hook');
    const builtAt = Date.now();
    const load = await loadHistory({
      dataDir: work,
      clientId: SCALE_CLIENT,
      secret,
      shape,
      kb,
      end: builtAt,
      onProgress: (done, total) => {
        if (done % 50_000 === 0) log(`  loaded ${done.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} exchanges`);
      },
    });
    writeFileSync(join(work, 'scale-build.json'), JSON.stringify({ secret, builtAt, load }));
    renameSync(work, dir);
    return { dir, secret, builtAt, build: load, load };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** A private copy of a cached store to serve from (the server writes: statistics, pruning, ingest). */
export function copyStore(from: string, prefix: string): string {
  const to = mkdtempSync(join(tmpdir(), prefix));
  cpSync(from, to, { recursive: true });
  return to;
}

import { existsSync, chmodSync } from 'node:fs';
import { resolve } from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';
import { UsageError } from './args.ts';

/**
 * `npm run cli -- backup FILE`: a consistent copy of the database while `serve` runs, through
 * SQLite's online backup (pages copied in steps, each under a short read lock, so ingest goes on;
 * a page written meanwhile makes SQLite copy it again). The copy is checked before it is reported.
 * It never overwrites: an old backup is worth more than a mistyped path.
 */
export async function backupCommand(databaseFile: string, args: string[]): Promise<string> {
  const [file, extra] = args;
  if (!file || extra !== undefined) throw new UsageError('backup takes one FILE: npm run cli -- backup FILE');
  if (!existsSync(databaseFile)) throw new UsageError(`no database at ${databaseFile}: check --data-dir`);
  const target = resolve(file);
  if (existsSync(target)) throw new UsageError(`${target} exists: backup never overwrites one; give a new file name`);
  const source = new DatabaseSync(databaseFile, { readOnly: true });
  let pages: number;
  try {
    pages = await backup(source, target, { rate: 1000 });
  } finally {
    source.close();
  }
  // The copy holds client secrets (sealed) and every conversation: owner-only, as the data folder.
  chmodSync(target, 0o600);
  const copy = new DatabaseSync(target, { readOnly: true });
  try {
    const check = (copy.prepare('PRAGMA quick_check').get() as { quick_check: string }).quick_check;
    if (check !== 'ok') throw new Error(`the copy at ${target} failed its check (${check}); keep the data folder and try again`);
    const version = (copy.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    return `backed up to ${target}: ${pages} pages, schema version ${version}, checked; keep secret.key apart from it (it unseals the client secrets)`;
  } finally {
    copy.close();
  }
}

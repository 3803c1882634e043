import type { SecretBox } from '../auth/secret-box.ts';
import type { CliIo } from './cli-io.ts';
import type { EngineFlags } from './engines-commands.ts';
import type { SecretFlags } from './secret-input.ts';
import { onPostgres } from './store-target.ts';
import { CONTRACT_GROUPS, contractGroupCommand, type CommandOutcome, type GroupContext } from './contract-groups.ts';

/** The command groups that run on a PostgreSQL store (--store); the CLI refuses the others (refuseOnPostgres). */
export const ON_POSTGRES: readonly string[] = ['clients', 'kb', 'engines', ...CONTRACT_GROUPS];

type PgFlags = EngineFlags & SecretFlags & { answer?: string } & Record<string, unknown>;

/**
 * One of ON_POSTGRES's groups on the database at `url`, with the same command code the data
 * folder's SQLite file runs (each group's store interface in store/contract.ts). Each module is
 * loaded by the group that runs, as on SQLite.
 */
export async function postgresCommand(group: string, url: string, io: CliIo, box: SecretBox, ctx: GroupContext & { flags: PgFlags }): Promise<CommandOutcome> {
  const { now, args, flags } = ctx;
  if (CONTRACT_GROUPS.includes(group)) {
    const { pgStore, pgInTransaction } = await import('../store/pg/pg-store.ts');
    return onPostgres(url, io, (pool) => contractGroupCommand(group, { store: pgStore(pool), transaction: pgInTransaction(pool) }, ctx));
  }
  const done = (out: string): CommandOutcome => ({ out, status: 0 });
  if (group === 'kb') {
    const [{ kbCommand }, { pgKbCliStore }] = await Promise.all([import('./kb-commands.ts'), import('../store/pg/kb-cli-queries.ts')]);
    return done(await onPostgres(url, io, (pool) => kbCommand(pgKbCliStore(pool), now, args, flags)));
  }
  if (group === 'engines') {
    const [{ enginesCommand }, { pgEnginesCliStore }] = await Promise.all([import('./engines-commands.ts'), import('../store/pg/engine-cli-queries.ts')]);
    return done(await onPostgres(url, io, (pool) => enginesCommand(pgEnginesCliStore(pool), box, now, args, flags, io.engines)));
  }
  if (group === 'clients') {
    const [{ clientsCommand }, { secretFrom }, { pgClientStore }] = await Promise.all([import('./clients-commands.ts'), import('./secret-input.ts'), import('../store/pg/client-queries.ts')]);
    const withSecret = { ...flags, secret: await secretFrom(flags, io) };
    return done(await onPostgres(url, io, (pool) => clientsCommand(pgClientStore(pool), box, now, args, withSecret)));
  }
  throw new Error(`"${group}" has no PostgreSQL route`);
}

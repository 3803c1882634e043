import type { ClientAdminStore, ClientStore } from '../store/contract.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { clientAdmin, ClientAdminError, CLIENT_ID } from '../auth/client-admin.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../../shared/client-settings.ts';
import { UsageError } from './args.ts';
import { applySettingFlags, describeSettings } from './settings-flags.ts';

function requireId(id: string | undefined): string {
  if (!id) throw new UsageError('a client ID is required');
  if (!CLIENT_ID.test(id)) throw new UsageError(`client ID "${id}" must be 1..128 characters of A-Z a-z 0-9 . _ : -`);
  return id;
}

export interface ClientFlags extends Record<string, unknown> {
  secret?: string;
  'retire-previous'?: boolean;
}

/** Admin errors are the operator's mistakes here: usage errors with the admin's message. */
async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ClientAdminError) throw new UsageError(error.message.replace('a secret must', '--secret must').replace('leave it out', 'omit it'));
    throw error;
  }
}

/** A client may only choose an engine that exists. */
async function checkEngine(store: ClientAdminStore, engine: string): Promise<void> {
  if (engine === 'kb' || (await store.engines.get(engine))) return;
  const names = ['kb', ...(await store.engines.list()).map((e) => e.name)].join(', ');
  throw new UsageError(`--engine must be one of ${names}, got "${engine}"`);
}

function secretNotice(secret: string): string {
  return `secret: ${secret}\nThis secret is shown once. Store it in the integration now; Switchboard keeps it encrypted and cannot show it again.`;
}

/** One clients command on either store (SQLite's data folder or a PostgreSQL database); returns what it prints. */
export async function clientsCommand(store: ClientStore, box: SecretBox, now: number, args: string[], flags: ClientFlags): Promise<string> {
  const [action, idArg] = args;
  const admin = clientAdmin(store, box);
  switch (action) {
    case 'add': {
      const id = requireId(idArg);
      const settings = applySettingFlags(DEFAULT_CLIENT_SETTINGS, flags);
      await checkEngine(store, settings.engine);
      const secret = await run(() => admin.add(id, settings, now, flags.secret));
      return `client ${id} added\n${secretNotice(secret)}`;
    }
    case 'list': {
      const rows: string[][] = [];
      for (const c of await store.clients.list()) {
        rows.push([
          c.id,
          c.enabled ? 'enabled' : 'disabled',
          String((await store.clients.activeSecrets(c.id)).length),
          c.settings.sendUrl ?? '-',
          c.settings.boundAccount ?? '-',
          c.settings.groupPolicy,
          new Date(c.createdAt).toISOString(),
        ]);
      }
      if (rows.length === 0) return 'no clients yet: add one with "npm run cli -- clients add ID"';
      const header = ['ID', 'STATE', 'SECRETS', 'SEND_URL', 'BOUND_ACCOUNT', 'GROUP_POLICY', 'CREATED'];
      const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
      return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
    }
    case 'rotate': {
      const id = requireId(idArg);
      const { secret, retired } = await run(() => admin.rotate(id, now, flags['retire-previous'] === true, flags.secret));
      const previous = flags['retire-previous']
        ? `The previous secret${retired === 1 ? ' was' : 's were'} retired at once.`
        : 'The previous secret stays valid until the next rotation (or "rotate --retire-previous").';
      return `client ${id}: new secret issued\n${secretNotice(secret)}\n${previous}`;
    }
    case 'set': {
      const id = requireId(idArg);
      const client = await store.clients.get(id);
      if (!client) throw new UsageError(`no client "${id}"`);
      const settings = applySettingFlags(client.settings, flags);
      await checkEngine(store, settings.engine);
      await admin.setSettings(id, settings, now);
      return `client ${id} updated\n${describeSettings(settings)}`;
    }
    case 'show': {
      const id = requireId(idArg);
      const client = await store.clients.get(id);
      if (!client) throw new UsageError(`no client "${id}"`);
      const secrets = (await store.clients.activeSecrets(id)).map((s) => `…${s.hint} (${new Date(s.createdAt).toISOString()})`);
      return [`client ${id} (${client.enabled ? 'enabled' : 'disabled'})`, `secrets  ${secrets.join(', ')}`, describeSettings(client.settings)].join('\n');
    }
    case 'disable':
    case 'enable': {
      const id = requireId(idArg);
      await run(() => admin.setEnabled(id, action === 'enable', now));
      return `client ${id} ${action}d`;
    }
    default:
      throw new UsageError(`unknown clients command "${action ?? ''}"; use add, list, show, set, rotate, disable or enable`);
  }
}

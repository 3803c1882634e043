import type { StoreContract } from '../store/contract.ts';
import { rotateConsoleToken } from '../console-api/console-token.ts';
import { UsageError } from './args.ts';
import type { Keyring } from '../auth/secret-box.ts';

/**
 * `console rotate-token`: a new console token, on either store. Only its hash is stored, so this is
 * the one time it is shown; a running server (every node, on PostgreSQL) refuses the old token
 * within a second.
 */
export async function consoleCommand(store: Pick<StoreContract, 'settings'>, key: Keyring, consolePort: number | null, args: string[]): Promise<string> {
  const [action, extra] = args;
  if (action !== 'rotate-token') throw new UsageError(`unknown console command "${action ?? ''}"; use rotate-token`);
  if (extra !== undefined) throw new UsageError(`console rotate-token takes no argument, got "${extra}"`);
  const token = await rotateConsoleToken(store.settings, key);
  const address = consolePort ? `http://127.0.0.1:${consolePort}/` : 'http://127.0.0.1:PORT/';
  return [
    `#token=${token}`,
    'The previous console token no longer works (a running server, every node of a PostgreSQL installation, refuses it within a second).',
    `Append the line above to the console address that serve printed, for example ${address}#token=${token}`,
  ].join('\n');
}

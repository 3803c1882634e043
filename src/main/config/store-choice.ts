import { UsageError } from '../cli/args.ts';

/** A store setting that is not a postgres:// URL: refused in one line, before anything is opened. */
export class StoreChoiceError extends UsageError {}

export const STORE_ENV = 'SWITCHBOARD_STORE';

/**
 * The store to use (issue 30), for serve and the CLI alike: --store, then SWITCHBOARD_STORE, then
 * config.json's `store`; null for the data folder's SQLite file. `configured` is a function so
 * that config.json is read only when neither the flag nor the environment decides.
 */
export function storeOf(flag: string | undefined, env: string | undefined, configured: () => string | undefined): string | null {
  const [value, from] = flag !== undefined ? [flag, '--store'] : env ? [env, STORE_ENV] : [configured(), 'config.json store'];
  if (value === undefined || value === '') return null;
  if (!/^postgres(ql)?:\/\/\S+$/.test(value)) throw new StoreChoiceError(`${from} must be a postgres:// URL (or unset for the data folder's SQLite file), got "${value.slice(0, 60)}"`);
  return value;
}

import { it } from 'node:test';
import assert from 'node:assert/strict';
import { storeOf, StoreChoiceError } from './store-choice.ts';
import { UsageError } from '../cli/args.ts';

const PG = 'postgres://sb@db.internal/switchboard';

it('takes --store, then SWITCHBOARD_STORE, then config.json, reading the config only when it decides', () => {
  let read = 0;
  const config = (value: string | undefined) => () => {
    read++;
    return value;
  };
  assert.equal(storeOf(PG, 'postgres://env/x', config('postgres://cfg/x')), PG);
  assert.equal(storeOf(undefined, PG, config('postgres://cfg/x')), PG);
  assert.equal(read, 0, 'the flag or the environment decided: config.json is not read');
  assert.equal(storeOf(undefined, undefined, config('postgresql://cfg/x')), 'postgresql://cfg/x');
  assert.equal(storeOf(undefined, '', config(PG)), PG, 'an empty variable is unset');
  assert.equal(read, 2);
  assert.equal(storeOf(undefined, undefined, config(undefined)), null, 'nothing chosen: SQLite');
  assert.equal(storeOf('', PG, config(PG)), null, 'an empty --store chooses SQLite over the environment');
});

it('refuses anything but a postgres:// URL in one line naming where it came from', () => {
  const refused = (fn: () => unknown, message: string) =>
    assert.throws(fn, (e: unknown) => e instanceof StoreChoiceError && e instanceof UsageError && e.message === message && !e.message.includes('\n'));
  refused(() => storeOf('mysql://db/x', undefined, () => undefined), '--store must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "mysql://db/x"');
  refused(() => storeOf(undefined, 'sqlite', () => PG), 'SWITCHBOARD_STORE must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "sqlite"');
  refused(() => storeOf(undefined, undefined, () => 'postgres:// spaced'), 'config.json store must be a postgres:// URL (or unset for the data folder\'s SQLite file), got "postgres:// spaced"');
  refused(() => storeOf(`file:${'x'.repeat(100)}`, undefined, () => undefined), `--store must be a postgres:// URL (or unset for the data folder's SQLite file), got "file:${'x'.repeat(55)}"`);
});

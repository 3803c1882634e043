import { it } from 'node:test';
import assert from 'node:assert/strict';
import { isPgUnavailable, redactedStoreUrl } from './pool.ts';

const withCode = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

it('tells an unreachable or overloaded database (a 503) from a wrong query (a fault)', () => {
  for (const e of [
    withCode('ECONNREFUSED'),
    withCode('08006'),
    withCode('53300', 'sorry, too many clients already'),
    withCode('53100'),
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P03', 'the database system is starting up'),
    withCode('25006', 'cannot execute INSERT in a read-only transaction'),
    new Error('Query read timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Connection terminated unexpectedly'),
  ]) assert.equal(isPgUnavailable(e), true, e.message);
  for (const e of [withCode('23505'), withCode('42601', 'syntax error'), withCode('22P02'), new Error('a bigint beyond 2^53'), 'a string']) {
    assert.equal(isPgUnavailable(e), false, String(e));
  }
});

it('shows a store URL without its password', () => {
  assert.equal(redactedStoreUrl('postgres://sb:s3cret@db.example:5432/switchboard'), 'postgres://sb:***@db.example:5432/switchboard');
  assert.equal(redactedStoreUrl('postgres://sb@db/x'), 'postgres://sb@db/x');
  assert.equal(redactedStoreUrl('not a url'), 'postgres://…');
});

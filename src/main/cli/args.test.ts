import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closestFlag, parseCommandFlags, UsageError } from './args.ts';

const KNOWN = ['from', 'from-type', 'to', 'at', 'send-url', 'secret', 'secret-env', 'port'];

test('a mistyped flag finds the known flag at most 2 edits away, a swap of two letters counting as one', () => {
  assert.equal(closestFlag('--form', KNOWN), '--from');
  assert.equal(closestFlag('--fromtype', KNOWN), '--from-type');
  assert.equal(closestFlag('--sendurl', KNOWN), '--send-url');
  assert.equal(closestFlag('--secret-envv', KNOWN), '--secret-env', 'the nearest one wins');
  assert.equal(closestFlag('--prot=9000', KNOWN), '--port', 'an inline value is not part of the name');
  assert.equal(closestFlag('--fro', KNOWN), '--from');
  assert.equal(closestFlag('--model', KNOWN), undefined);
  assert.equal(closestFlag('--xy', KNOWN), undefined, 'a two-letter typo is not "2 edits from --to"');
  assert.equal(closestFlag('--endpoints', ['endpoint']), '--endpoint');
});

test('parseCommandFlags words an unknown flag in one line, with the suggestion when there is one', () => {
  const options = { from: { type: 'string' }, port: { type: 'string' } } as const;
  const error = (argv: string[]): string => {
    try {
      parseCommandFlags('send', argv, options);
    } catch (e) {
      assert.ok(e instanceof UsageError);
      return e.message;
    }
    return assert.fail('no error');
  };
  assert.equal(error(['--form', 'v']), 'send has no option --form (did you mean --from?); see npm run cli -- send --help');
  assert.equal(error(['--model', 'v']), 'send has no option --model; see npm run cli -- send --help');
  assert.equal(error(['--from']), '--from needs a value');
});

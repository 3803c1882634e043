import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTypoFixer } from './typo-fixer.ts';

test('a word one edit from one known word is read as it; none or several, it is left alone', () => {
  const fixer = createTypoFixer(['invoic', 'warranti']);
  assert.equal(fixer.fix('invioc'), 'invoic', 'two letters swapped');
  assert.equal(fixer.fix('warrant'), 'warranti', 'one letter missing');
  assert.equal(fixer.fix('invoicx'), 'invoic', 'one letter more');
  assert.equal(fixer.fix('pasword'), '~password', 'a synonym group\'s word, typed wrong');
  assert.equal(fixer.fix('zebra'), undefined);
  assert.equal(fixer.fix('invo'), undefined, 'four letters: too short to guess');
  const ambiguous = createTypoFixer(['cards', 'carts']);
  assert.equal(ambiguous.fix('carbs'), undefined);
});

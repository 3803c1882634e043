import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { serverConfigSchema } from '../src/main/config/server-config.ts';

const DOC = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');

test('docs/operations.md lists every server setting with its default, as the service has them', () => {
  const section = DOC.slice(DOC.indexOf('## Configuration'));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'a JSON block under "Configuration"');
  assert.deepEqual(JSON.parse(block), serverConfigSchema.parse({}));
});

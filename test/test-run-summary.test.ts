import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPORTER = new URL('./reporter/summary.ts', import.meta.url).pathname;

/** A run as `npm test` makes it (spec plus the summary reporter) over one file, with or without CI set. */
function run(file: string, ci: boolean): { stdout: string; status: number | null } {
  const env = { ...process.env };
  delete env['CI'];
  if (ci) env['CI'] = 'true';
  // The runner sets NODE_TEST_CONTEXT in its children: a nested run would report to its parent instead.
  delete env['NODE_TEST_CONTEXT'];
  const r = spawnSync(
    process.execPath,
    ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', file],
    { encoding: 'utf8', env },
  );
  return { stdout: r.stdout, status: r.status };
}

describe("the test run's closing summary", () => {
  let dir: string;
  let skipping: string;
  let electronOnly: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sb-summary-'));
    skipping = join(dir, 'skipping.test.mjs');
    writeFileSync(
      skipping,
      `import { describe, it } from 'node:test';
describe('console in Chromium', { skip: 'no Chromium at /usr/bin/chromium' }, () => { it('one', () => {}); it('two', () => {}); });
describe('the API', () => { it('answers', () => {}); it('later', { skip: 'python3 is not installed' }, () => {}); });
`,
    );
    electronOnly = join(dir, 'electron-only.test.mjs');
    writeFileSync(
      electronOnly,
      `import { describe, it } from 'node:test';
describe('desktop app (Electron)', { skip: 'the Electron binary is not installed: it could not be downloaded on this machine' }, () => { it('opens', () => {}); });
describe('the API', () => { it('answers', () => {}); });
`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('counts a skipped suite, names it with its reason, and ends with the plain passed/failed/skipped line', () => {
    const { stdout, status } = run(skipping, false);
    assert.equal(status, 0, 'outside CI a skip is reported, not fatal');
    assert.match(stdout, /skipped: 1 suite\(s\), whose tests did not run, and 1 test\(s\):/);
    assert.match(stdout, /- suite "console in Chromium" \(.*skipping\.test\.mjs\): no Chromium at \/usr\/bin\/chromium/);
    assert.match(stdout, /- test "later" \(.*\): python3 is not installed/);
    assert.equal(stdout.trimEnd().split('\n').at(-1), '1 passed, 0 failed, 2 skipped');
  });

  it('under CI, a skipped suite that CI can run fails the run; the Electron suite, which no machine here can run, does not', () => {
    const strict = run(skipping, true);
    assert.equal(strict.status, 1);
    assert.match(strict.stdout, /error: under CI, 2 skipped suite\(s\) or test\(s\) could have run here/);
    const electron = run(electronOnly, true);
    assert.equal(electron.status, 0, electron.stdout);
    assert.equal(electron.stdout.trimEnd().split('\n').at(-1), '1 passed, 0 failed, 1 skipped', 'counted as skipped, not passed');
  });
});

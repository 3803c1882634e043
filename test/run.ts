import { spawnSync } from 'node:child_process';

/**
 * npm test after the build: node's test runner on every test file, three at a time. Files start in
 * the order given, so the slowest (browser and subprocess suites, each 15–45 s) go first and the
 * hundreds of short unit files fill in around them, instead of the run ending on a long file
 * started late. The runner drops a file named twice, so the globs after the list add the rest.
 * Keep the list to the slowest dozen; a file missing from it still runs, only later.
 */
const SLOWEST_FIRST = [
  'test/cli.test.ts',
  'test/console-workspace.test.ts',
  'test/secret-key-sharing.test.ts',
  'test/console-a11y.test.ts',
  'test/console-sign-in.test.ts',
  'test/console-views.test.ts',
  'test/console-delivery-states.test.ts',
  'test/team-workflow.test.ts',
  'test/console-knowledge-base-and-outage.test.ts',
  'test/cli-send-receive.test.ts',
  'test/console-ui.test.ts',
  'test/auto-replies.test.ts',
  'test/console-integrate-im.test.ts',
  'test/team-sign-in.test.ts',
  'test/replay-past-questions.test.ts',
  'test/store-copy.test.ts',
];

const args = [
  '--test',
  '--test-concurrency=3',
  '--test-timeout=120000',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=./test/reporter/summary.ts',
  '--test-reporter-destination=stdout',
  ...SLOWEST_FIRST,
  'test/**/*.test.ts',
  'src/**/*.test.ts',
];
const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SWITCHBOARD_TEST_BUILT: '1' } });
process.exit(run.status ?? 1);

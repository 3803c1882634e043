import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * npm test after the build: node's test runner on every test file, three at a time. Files start in
 * the order given, so the slowest (browser and subprocess suites, each 15–45 s) go first and the
 * hundreds of short unit files fill in around them, instead of the run ending on a long file
 * started late. The runner drops a file named twice, so the globs after the list add the rest.
 * Keep the list to the slowest dozen; a file missing from it still runs, only later.
 */
const SLOWEST_FIRST = [
  'test/console-workspace.test.ts',
  'test/console-sign-in.test.ts',
  'test/team-workflow.test.ts',
  'test/console-a11y.test.ts',
  'test/console-views.test.ts',
  'test/team-sign-in.test.ts',
  'test/console-delivery-states.test.ts',
  'test/console-knowledge-base-and-outage.test.ts',
  'test/console-integrate-im.test.ts',
  'test/console-ui.test.ts',
  'test/secret-key-sharing.test.ts',
  'test/cli-send-receive.test.ts',
  'test/auto-replies.test.ts',
  'test/replay-past-questions.test.ts',
  'test/store-copy.test.ts',
  'test/postgres-nodes.test.ts',
  'test/postgres-console-browser.test.ts',
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
/**
 * The tests' temporary folders (their SQLite files, data folders, PostgreSQL clusters, browser
 * profiles) go in memory when the machine has a tmpfs with room: SQLite commits with fsync, and on
 * this machine's disk the suite's thousands of commits wait about a minute for it in all. The files
 * and their SQL are the same; only power-loss durability, which no test can observe, differs.
 * Without /dev/shm (or with less than 4 GiB free, as a container's 64 MB default) they stay in
 * the system's temporary folder. SWITCHBOARD_TEST_TMPDIR=… chooses another.
 */
function memoryTmp(): string | null {
  const chosen = process.env['SWITCHBOARD_TEST_TMPDIR'];
  let dir: string;
  try {
    if (chosen) dir = mkdtempSync(join(chosen, 'switchboard-tests-'));
    else {
      const fs = statfsSync('/dev/shm');
      if (fs.bavail * fs.bsize < 4 * 1024 ** 3) return null;
      dir = mkdtempSync('/dev/shm/switchboard-tests-');
    }
  } catch {
    return null;
  }
  // As /tmp is: the PostgreSQL tests run the server as the postgres user, who must enter it.
  chmodSync(dir, 0o1777);
  return dir;
}

const tmp = memoryTmp();
/**
 * The PostgreSQL tests' servers each need a cluster: the first runs initdb and leaves a copy here,
 * the rest copy it (test/helpers/postgres.ts; ~0.05 s instead of ~0.5 s of CPU a server). Gone
 * with the run, so the next run's initdb is that of the PostgreSQL installed then.
 */
const pgTemplates = mkdtempSync(join(tmp ?? tmpdir(), 'switchboard-pg-templates-'));
// The initdb of the first server, and its copy, run as the postgres user when this is root.
chmodSync(pgTemplates, 0o1777);
// Ctrl-C reaches the runner too (one process group): this launcher outlives it, to remove the
// folder, which would otherwise hold its files in memory until the machine restarts.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
/**
 * Node's compile cache for every process of the run (each test file's, and the serve and CLI
 * processes they start): the suite loads the same TypeScript modules in a few hundred processes,
 * and without it each one strips and compiles them again. Measured on one unit file: 0.64 → 0.45 s
 * of CPU once the cache is warm (a fresh clone fills it during its first run). The folder serve
 * uses (headless.ts); an operator's own NODE_COMPILE_CACHE or NODE_DISABLE_COMPILE_CACHE wins.
 */
function compileCache(): Record<string, string> {
  if (process.env['NODE_COMPILE_CACHE'] !== undefined || process.env['NODE_DISABLE_COMPILE_CACHE'] !== undefined) return {};
  return { NODE_COMPILE_CACHE: join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache', 'node-compile') };
}

const run = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, SWITCHBOARD_TEST_BUILT: '1', SWITCHBOARD_PG_TEMPLATES: pgTemplates, ...compileCache(), ...(tmp ? { TMPDIR: tmp } : {}) },
});
// Whatever the tests left there is memory: gone with the run.
rmSync(pgTemplates, { recursive: true, force: true });
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(run.status ?? 1);

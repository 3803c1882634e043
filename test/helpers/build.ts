import { spawnSync } from 'node:child_process';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * The console build (out/) that `serve` and the Electron window load. `npm test` builds it once
 * before any test runs and says so with SWITCHBOARD_TEST_BUILT=1: test files run two at a time,
 * and one rebuilding out/ while another's server serves it made the other see no console. A test
 * file run by itself builds it here.
 */
export function ensureConsoleBuilt(): void {
  if (process.env['SWITCHBOARD_TEST_BUILT'] === '1') return;
  const build = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`electron-vite build failed:\n${build.stderr}`);
}

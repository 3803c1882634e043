import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MAIN_V8_FLAGS } from './runtime-flags.ts';

/**
 * `npm start`: the desktop window where Electron can run, otherwise the same service headless
 * with the console in a browser, after one line that says why.
 */
function electronBinary(): { path: string } | { reason: string } {
  // Not require('electron'): in Electron 45 that starts a download when the binary is missing.
  let pathFile: string;
  try {
    pathFile = join(dirname(createRequire(import.meta.url).resolve('electron/package.json')), 'path.txt');
  } catch {
    return { reason: 'the electron package is not installed' };
  }
  const dist = process.env['ELECTRON_OVERRIDE_DIST_PATH'] ?? join(dirname(pathFile), 'dist');
  if (!existsSync(pathFile)) return { reason: 'the Electron binary is not installed (it could not be downloaded at npm install)' };
  const binary = join(dist, readFileSync(pathFile, 'utf8').trim());
  if (!existsSync(binary)) return { reason: 'the Electron binary is missing' };
  if (process.platform === 'linux' && !process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']) {
    return { reason: 'no display (DISPLAY and WAYLAND_DISPLAY are unset)' };
  }
  return { path: binary };
}

function build(): void {
  const result = spawnSync(process.execPath, ['node_modules/electron-vite/bin/electron-vite.js', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('switchboard: building the app failed; see above');
    process.exit(1);
  }
}

const electron = electronBinary();
build();
// The service runs in a process of its own either way, started with the heap bounds of runtime-flags.ts.
const child =
  'path' in electron
    ? spawn(electron.path, [`--js-flags=${MAIN_V8_FLAGS.join(' ')}`, '.', ...process.argv.slice(2)], { stdio: 'inherit' })
    : (console.log(`switchboard: desktop window unavailable: ${electron.reason}; running headless`),
      spawn(process.execPath, [...MAIN_V8_FLAGS, 'src/main/headless.ts', ...process.argv.slice(2)], { stdio: 'inherit' }));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));

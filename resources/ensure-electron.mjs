// postinstall: fetch the Electron binary with Electron's own installer, tolerating failure.
// Electron's install script is disabled in package.json (allowScripts) because without network
// it fails the whole `npm install`; here a failure only means `npm start` runs headless.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const installer = 'node_modules/electron/install.js';
if (!existsSync(installer)) process.exit(0);
const run = spawnSync(process.execPath, [installer], { encoding: 'utf8', timeout: 300_000 });
if (run.status === 0) {
  console.log('switchboard: Electron binary ready; npm start opens the desktop window');
} else {
  const reason = `${run.stderr ?? ''}${run.error?.message ?? ''}`.split('\n').find((l) => l.trim()) ?? 'unknown error';
  console.log(`switchboard: Electron binary not downloaded (${reason.trim().slice(0, 160)}); npm start will run headless`);
}

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';

const ROOT = new URL('../', import.meta.url).pathname;
const scripts = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('npm scripts pass a supervisor\'s SIGTERM on to the program', () => {
  it('start, serve and cli end in exec: no shell stays between npm and node to swallow the signal', () => {
    for (const name of ['start', 'serve', 'cli']) assert.match(scripts[name]!, /(^|&& )(\w+=\S+ )?exec node /, `${name}: ${scripts[name]}`);
  });

  it('SIGTERM to `npm run cli -- receive` stops the receiver: its port closes and npm exits', async () => {
    // Not a process group signal (an interactive shell's kill %1 sends that): only npm's pid, as
    // systemd, Docker or a CI runner do.
    const npm = spawn('npm', ['run', '-s', 'cli', '--', 'receive', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
    for (let i = 0; i < 400 && !/^listening: http:\/\/127\.0\.0\.1:(\d+)\//m.test(out); i++) await new Promise((r) => setTimeout(r, 25));
    const port = Number(/^listening: http:\/\/127\.0\.0\.1:(\d+)\//m.exec(out)?.[1]);
    assert.ok(port > 0, `receive started: ${out}`);
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    npm.kill('SIGTERM');
    await exited;
    let open = true;
    for (let i = 0; i < 100 && open; i++) {
      open = await listening(port);
      if (open) await new Promise((r) => setTimeout(r, 50));
    }
    // An orphan would hold these pipes open and keep the test run from ending.
    npm.stdout.destroy();
    npm.stderr.destroy();
    assert.equal(open, false, 'the receiver stopped with npm, instead of living on as an orphan');
  });
});

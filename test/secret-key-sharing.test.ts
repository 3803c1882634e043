import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, secretFrom, type CliResult } from './helpers/processes.ts';
import { cliHereArgs } from './helpers/cli-here.ts';
import { signBody } from './helpers/sign.ts';
import { MAIN_V8_FLAGS } from '../src/main/runtime-flags.ts';
import { keyIdOf } from '../src/main/auth/sealing-key.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const tmp = (name: string) => mkdtempSync(join(tmpdir(), `sb-key-${name}-`));

/** The CLI as its own process: the key it reads from the process's environment. */
function cliProcess(dataDir: string, args: string[], env: Record<string, string> = {}): CliResult {
  const r = spawnSync(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The CLI run in this process (runCli, as a start runs it, with `env` added to its environment):
 * the key is shared through files and environment variables, not through the CLI's process, and
 * a Node start per command was a third of this file's time.
 */
const cli = (dataDir: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> => cliHereArgs([...args, '--data-dir', dataDir], { env });

/** A key file as an operator makes one for several nodes (outside any data folder). */
async function keyFile(): Promise<{ path: string; text: string; id: string }> {
  const path = join(tmp('file'), 'switchboard.key');
  const made = await cli(tmp('unused'), ['secrets', 'new-key', path]);
  assert.equal(made.status, 0, made.stderr);
  const text = readFileSync(path, 'utf8').trim();
  return { path, text, id: keyIdOf(Buffer.from(text, 'base64url')) };
}

const idOf = (path: string): string => keyIdOf(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64url'));

/** One real signed message through the endpoint: 200 only if serve opened the client's secret. */
async function signedStatus(endpoint: string, secret: string, client = 'acme'): Promise<number> {
  const id = randomBytes(6).toString('hex');
  const info = { event_type: 'auto_dialog', msg_id: id, from_user_id: `cust-${id}`, from_user_type: 2, content: `hello ${id}` };
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signBody(client, secret, info, Math.floor(Date.now() / 1000))) });
  const text = await r.text();
  if (r.status !== 200) console.error(text);
  return r.status;
}

/** serve that is expected to refuse to start: its exit code and stderr. */
async function serveRefusal(dataDir: string, extra: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...MAIN_V8_FLAGS, 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir, ...extra], { cwd: ROOT, env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // A serve that starts after all is a failure to report, not a test that waits forever.
  child.stdout.on('data', (c: Buffer) => {
    if (c.toString().includes('endpoint: ')) child.kill('SIGTERM');
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

async function stopped(server: Awaited<ReturnType<typeof spawnServe>>): Promise<void> {
  server.child.kill('SIGTERM');
  assert.equal(await server.exit(), 0);
}

describe('one sealing key shared by the CLI and every serve process (issue 30)', () => {
  it('serve given the key in SWITCHBOARD_SECRET_KEY opens a client secret the CLI sealed with the same key from a file', async () => {
    const key = await keyFile();
    const data = tmp('data');
    const secret = secretFrom((await cli(data, ['--secret-key-file', key.path, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook'])).stdout);
    assert.equal(existsSync(join(data, 'secret.key')), false, 'a named key: the data folder gets none of its own');
    const server = await spawnServe(data, [], { SWITCHBOARD_SECRET_KEY: key.text });
    try {
      assert.match(server.stderr(), new RegExp(`^secret key: ${key.id} \\(SWITCHBOARD_SECRET_KEY\\)$`, 'm'));
      assert.equal(await signedStatus(server.endpoint, secret), 200);
      assert.ok(!server.stderr().includes(key.text), 'the key is never printed');
    } finally {
      await stopped(server);
    }
  });

  it('the wrong key is a clear one-line error naming both key ids: serve refuses to start, secrets check exits 1', async () => {
    const key = await keyFile();
    const other = await keyFile();
    const data = tmp('data');
    await cli(data, ['--secret-key-file', key.path, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook']);
    const refused = await serveRefusal(data, [], { SWITCHBOARD_SECRET_KEY: other.text });
    assert.equal(refused.code, 1);
    const expected = `secret sealed with key ${key.id}, this node has key ${other.id} (SWITCHBOARD_SECRET_KEY): every node must share one key; see docs/operations.md, "Secret key"`;
    const last = refused.stderr.trim().split('\n').at(-1)!;
    assert.ok(last.startsWith('switchboard: none of the 1 stored client secrets and engine keys opens with this node\'s key (client acme secret …') && last.endsWith(`: ${expected})`), last);
    assert.ok(!refused.stderr.includes(other.text) && !refused.stderr.includes(key.text));

    const check = await cli(data, ['secrets', 'check'], { SWITCHBOARD_SECRET_KEY_FILE: other.path });
    assert.equal(check.status, 1);
    const line = check.stdout.split('\n').find((l) => l.startsWith('does not open: client acme secret …'));
    assert.ok(line?.endsWith(`: ${expected.replace('(SWITCHBOARD_SECRET_KEY)', `(SWITCHBOARD_SECRET_KEY_FILE=${other.path})`)}`), check.stdout);

    const bad = await serveRefusal(data, [], { SWITCHBOARD_SECRET_KEY: 'not-a-key' });
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, 'switchboard: SWITCHBOARD_SECRET_KEY holds 6 bytes, not a 32-byte key; restore it from backup or make one with: npm run cli -- secrets new-key FILE\n');
    const missing = await serveRefusal(data, ['--secret-key-file', join(data, 'nope.key')], {});
    assert.equal(missing.stderr, `switchboard: cannot read the secret key --secret-key-file ${join(data, 'nope.key')}: no such file\n`);
  });

  it('rotate-key while serve runs: serve verifies signed requests throughout, and a new serve with the new key does too; the old key is refused', async () => {
    const key = await keyFile();
    const oldText = key.text;
    const data = tmp('data');
    const secret = secretFrom((await cli(data, ['--secret-key-file', key.path, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook'])).stdout);
    await cli(data, ['--secret-key-file', key.path, 'engines', 'add', 'local', '--model', 'm', '--api-key-env', 'ENGINE_KEY'], { ENGINE_KEY: 'sk-test-0123456789' });
    const running = await spawnServe(data, ['--secret-key-file', key.path]);
    try {
      assert.equal(await signedStatus(running.endpoint, secret), 200);
      const rotated = await cli(data, ['secrets', 'rotate-key'], { SWITCHBOARD_SECRET_KEY_FILE: key.path });
      assert.equal(rotated.status, 0, rotated.stderr);
      const newId = idOf(key.path);
      assert.notEqual(newId, key.id);
      assert.match(rotated.stdout, new RegExp(`^re-sealed 2 values: key ${key.id} → ${newId}$`, 'm'));
      assert.equal(readFileSync(`${key.path}.old`, 'utf8').trim(), oldText);
      // The running serve read the old key; it reads the replaced file when it meets the new key id
      // (a client added now is unknown to it, so it opens every stored secret again).
      assert.equal(await signedStatus(running.endpoint, secret), 200);
      const beta = secretFrom((await cli(data, ['--secret-key-file', key.path, 'clients', 'add', 'beta', '--send-url', 'http://127.0.0.1:9/hook'])).stdout);
      assert.equal(await signedStatus(running.endpoint, beta, 'beta'), 200);
      assert.equal(await signedStatus(running.endpoint, secret), 200);
    } finally {
      await stopped(running);
    }
    const fresh = await spawnServe(data, [], { SWITCHBOARD_SECRET_KEY: readFileSync(key.path, 'utf8').trim() });
    try {
      assert.equal(await signedStatus(fresh.endpoint, secret), 200);
    } finally {
      await stopped(fresh);
    }
    const stale = await serveRefusal(data, [], { SWITCHBOARD_SECRET_KEY: oldText });
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, new RegExp(`sealed with key ${idOf(key.path)}, this node has key ${key.id} \\(SWITCHBOARD_SECRET_KEY\\)`));
    const check = await cli(data, ['secrets', 'check', '--secret-key-file', key.path]);
    assert.equal(check.status, 0, check.stdout);
    assert.match(check.stdout, /no value needs the previous key: once every node runs key [0-9a-f]{8}, remove .*switchboard\.key\.old$/m);
  });

  for (const step of ['afterPreviousKeyWritten', 'afterKeyFileWritten', 'beforeCommit'] as const) {
    it(`a rotation killed (SIGKILL) at ${step}: every value still opens (serve verifies a signed request with the new key file and its .old); rotating again completes`, async () => {
      const key = await keyFile();
      const data = tmp('data');
      const secret = secretFrom((await cli(data, ['--secret-key-file', key.path, 'clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook'])).stdout);
      const killed = spawnSync(process.execPath, ['test/helpers/rotate-then-crash.ts', data, key.path, step], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
      if (step === 'afterKeyFileWritten') {
        // The one step where the key file is already new and every value still sealed with the old
        // key: serve must open them with <key file>.old. At the other two the CLI's check shows
        // every value opens (key-rotation.test.ts runs every pair of steps in-process).
        const server = await spawnServe(data, ['--secret-key-file', key.path]);
        try {
          assert.equal(await signedStatus(server.endpoint, secret), 200);
        } finally {
          await stopped(server);
        }
      } else {
        const opened = await cli(data, ['secrets', 'check', '--secret-key-file', key.path]);
        assert.equal(opened.status, 0, opened.stdout + opened.stderr);
      }
      const again = await cli(data, ['secrets', 'rotate-key', '--secret-key-file', key.path]);
      assert.equal(again.status, 0, again.stderr);
      // Serve after a completed rotation is the rotate-while-serving test's; here the CLI opens every value.
      const check = await cli(data, ['secrets', 'check', '--secret-key-file', key.path]);
      assert.equal(check.status, 0, check.stdout + check.stderr);
    });
  }

  it('a key from the environment: rotate-key takes the new key from a file, writes no key file, and says what to change', async () => {
    const key = await keyFile();
    const next = await keyFile();
    const data = tmp('data');
    await cli(data, ['clients', 'add', 'acme', '--send-url', 'http://127.0.0.1:9/hook'], { SWITCHBOARD_SECRET_KEY: key.text });
    const refused = await cli(data, ['secrets', 'rotate-key'], { SWITCHBOARD_SECRET_KEY: key.text });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^error: this node's key comes from SWITCHBOARD_SECRET_KEY, which this command cannot change/);
    const rotated = await cli(data, ['secrets', 'rotate-key', '--new-key-file', next.path], { SWITCHBOARD_SECRET_KEY: key.text });
    assert.equal(rotated.status, 0, rotated.stderr);
    assert.match(rotated.stdout, new RegExp(`On every node set SWITCHBOARD_SECRET_KEY to the contents of ${next.path.replace(/\./g, '\\.')} \\(key ${next.id}\\) and restart it`));
    assert.equal(existsSync(join(data, 'secret.key')), false);
    assert.equal(existsSync(`${key.path}.old`), false);
    // A real process: the CLI reads the key from its own environment.
    assert.equal(cliProcess(data, ['secrets', 'check'], { SWITCHBOARD_SECRET_KEY: next.text }).status, 0);
  });
});

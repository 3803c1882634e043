import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../', import.meta.url).pathname;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The text of a tagged README block. */
function raw(lang: string, tag: string): string {
  const m = new RegExp('```' + lang + ' ' + tag + '\\n([\\s\\S]*?)```').exec(README);
  assert.ok(m, `README has a \`\`\`${lang} ${tag} block`);
  return m[1]!;
}

/** The command lines of a tagged README block, comments dropped. */
function block(tag: string): string[] {
  return raw('sh', tag)
    .split('\n')
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l !== '');
}

/** README's sample output: each `$ command` with the lines it prints. */
function samples(tag: string): Array<{ command: string; output: string }> {
  return raw('text', tag)
    .split(/^\$ /m)
    .filter((chunk) => chunk !== '')
    .map((chunk) => {
      const [command, ...output] = chunk.split('\n');
      return { command: command!, output: output.join('\n') };
    });
}

/** What differs from run to run (ids, times, the secret) becomes a placeholder. */
function stable(text: string): string {
  return text
    .replace(/^secret: [A-Za-z0-9_-]{43}$/m, 'secret: <secret>')
    // base64url ids may end in "-", where \b would not match
    .replace(/\b(cli|req|c|r)_[A-Za-z0-9_-]{16}(?![A-Za-z0-9_-])/g, '$1_<id>')
    .replace(/timestamp \d{10}\b/g, 'timestamp <now>')
    .replace(/\(\d+ ms\)/g, '(<n> ms)')
    .trimEnd();
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('README quick start, line by line', () => {
  const background: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-quickstart-'));
  after(() => {
    for (const child of background) if (child.pid) try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone already */ }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves, adds a client, imports the sample knowledge base, and send gets the answer; receive gets a verified auto reply', async () => {
    // Fixed ports in README; free ones here, and the demo folder in a temp dir instead of the clone.
    const [endpointPort, receiverPort] = [await freePort(), await freePort()];
    const localize = (line: string): string =>
      line.replaceAll('8787', String(endpointPort)).replaceAll('9000', String(receiverPort)).replace('"$PWD/demo-data"', JSON.stringify(dataDir));
    const env: Record<string, string> = { ...(process.env as Record<string, string>) };
    const outputs: string[] = [];
    const printedBy = new Map<string, string>();
    const logs = new Map<ChildProcess, string>();

    const runLine = async (raw: string): Promise<void> => {
      const line = localize(raw);
      const exported = /^export (\w+)=(.*)$/.exec(line);
      if (exported) {
        const [, name, value] = exported;
        // The secret the reader copies from `clients add`: take it from that command's output.
        env[name!] = value!.includes('<the secret it printed>') ? /^secret: (\S+)$/m.exec(outputs.join('\n'))![1]! : spawnSync('sh', ['-c', `printf '%s' ${value}`], { env }).stdout.toString();
        return;
      }
      if (line.endsWith('&')) {
        let command = line.slice(0, -1).trim();
        // `npm run serve` builds the console first; the suite has built it already, and rebuilding
        // out/ under the other test files would pull it from under them. The rest is the same script.
        const serve = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.serve as string;
        const parts = /^electron-vite build [^&]*&& ((?:[A-Z_]+=\S+ )*)exec node (.*)$/.exec(serve);
        assert.ok(parts, `package.json's serve script is "build && [VAR=value ...] exec node ...": ${serve}`);
        // npm runs scripts on the pinned Node (node_modules/.bin first on PATH); so does this.
        command = command.replace(/^npm run -s serve --/, `${JSON.stringify(process.execPath)} ${parts[2]} --console-port 0`);
        const scriptEnv = Object.fromEntries((parts[1] ?? '').trim().split(/\s+/).filter(Boolean).map((a) => a.split('=', 2) as [string, string]));
        const child = spawn('bash', ['-c', `exec ${command}`], { cwd: ROOT, env: { ...env, ...scriptEnv }, detached: true });
        background.push(child);
        logs.set(child, '');
        const collect = (c: Buffer): void => void logs.set(child, logs.get(child)! + c.toString());
        child.stdout!.on('data', collect);
        child.stderr!.on('data', collect);
        // README tells the reader to wait for serve's console: line; so does this.
        const ready = /serve/.test(raw) ? /^console: /m : /^listening: /m;
        for (let i = 0; i < 200 && !ready.test(logs.get(child)!); i++) await new Promise((r) => setTimeout(r, 50));
        assert.match(logs.get(child)!, ready, `${raw}: started`);
        return;
      }
      // As the reader types it: npm, on the PATH the test was given, not the node behind it.
      const run = spawnSync('bash', ['-c', line], { cwd: ROOT, env, encoding: 'utf8' });
      outputs.push(run.stdout);
      printedBy.set(raw, run.stdout);
      assert.equal(run.status, 0, `${raw}\n${run.stdout}\n${run.stderr}`);
      assert.equal(run.stderr, '', `${raw} prints nothing on stderr once serve is up`);
    };

    for (const line of block('readme-quickstart')) await runLine(line);
    for (const line of block('readme-quickstart-client')) await runLine(line);
    const answer = outputs.at(-1)!;
    assert.match(answer, /HTTP 200 OK/);
    assert.match(answer, /Open Settings > Security > Reset password/);
    assert.match(answer, /"handoff": false/);

    // What README shows for each command is what it printed: no npm banner, no other line.
    const shown = samples('readme-quickstart-output');
    assert.deepEqual(
      shown.map((s) => s.command),
      block('readme-quickstart-client').filter((l) => !l.startsWith('export ')),
      'README shows the output of each command of the block, in order',
    );
    for (const { command, output } of shown) {
      assert.doesNotMatch(printedBy.get(command)!, /^> switchboard@/m, `${command}: no npm banner`);
      assert.equal(stable(printedBy.get(command)!), stable(localize(output)), `${command}: prints what README shows`);
    }

    for (const line of block('readme-quickstart-replies')) await runLine(line);
    assert.match(outputs.at(-1)!, /"reason": "scheduled"/);
    const receiver = background.at(-1)!;
    // The quiet period (2 s) runs on the real clock here: the service is a separate process.
    for (let i = 0; i < 200 && !/answered 200/.test(logs.get(receiver)!); i++) await new Promise((r) => setTimeout(r, 50));
    const printed = logs.get(receiver)!;
    assert.match(printed, /Open Orders in your account/);
    assert.match(printed, /signature ok \(client acme\)/);
    assert.match(printed, /timestamp fresh/);
    assert.match(printed, /answered 200/);
  });
});

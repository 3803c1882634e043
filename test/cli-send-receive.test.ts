import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { spawnServe, type ServeProcess } from './helpers/processes.ts';
import { signBody } from './helpers/sign.ts';
import { cliHere, cliHereArgs } from './helpers/cli-here.ts';
import { eventually } from './helpers/receiver.ts';
import { canonicalJson } from '../src/main/auth/canonical-json.ts';
import { hmacKey, sign, signingString } from '../src/main/auth/signature.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const SECRET = 'acme-secret-0123456789abcdefghijklmnopqrstuv';
const BARE_SECRET = 'bare-secret-0123456789abcdefghijklmnopqrstuv';
const QUESTION = 'What are your opening hours?';
const ANSWER = '9 to 6, Monday to Friday.';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run cli -- ...` as its own process, with no --data-dir added: these tools need none. */
function run(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/main/cli/index.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * The same command run in this process (runCli, as a start runs it): most cases here need no
 * process of their own, and a Node start was most of this file's time. Real processes still cover
 * send's and receive's exit status and output, success and failure, and the process's environment.
 */
const here = (args: string[], env: Record<string, string> = {}): Promise<Run> => cliHereArgs(args, { env });

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  return port;
}

interface ReceiveProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves once the output matches, failing the test after 20 s. */
  waitFor(pattern: RegExp): Promise<void>;
  stop(): Promise<number | null>;
}

async function startReceive(args: string[], env: Record<string, string> = {}): Promise<ReceiveProcess> {
  const child = spawn(process.execPath, ['src/main/cli/index.ts', 'receive', '--port', '0', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    for (const w of waiters) w();
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    void exited.then((code) => reject(new Error(`receive exited with ${code}: ${err}`)));
  });
  const waitFor = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(out)) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`receive never printed ${pattern}; it printed:\n${out}\n${err}`));
      }, 20_000);
      waiters.add(check);
      check();
    });
  return {
    child,
    url: /^listening: (\S+)/.exec(first)?.[1] ?? assert.fail(`first line is not the address: ${first}`),
    output: () => out,
    waitFor,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('npm run cli -- send (protocol section 10)', () => {
  let dataDir: string;
  let serve: ServeProcess;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sb-send-'));
    assert.equal((await cliHere(dataDir, 'clients', 'add', 'acme', '--secret', SECRET, '--quiet-seconds', '0')).status, 0);
    assert.equal((await cliHere(dataDir, 'clients', 'add', 'bare', '--secret', BARE_SECRET)).status, 0);
    assert.equal((await cliHere(dataDir, 'kb', 'add', '--question', QUESTION, '--answer', ANSWER)).status, 0);
    serve = await spawnServe(dataDir);
  });
  after(async () => {
    serve.child.kill('SIGTERM');
    await serve.exit();
  });

  it('sends a signed website_dialog and prints status, headers and the pretty body', async () => {
    const r = await run(['send', '--client', 'acme', '--secret', SECRET, '--endpoint', serve.endpoint, '--event', 'website_dialog', '--from', 'visitor-1', '--content', QUESTION]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^HTTP 200 OK \(\d+ ms\)$/m);
    assert.match(r.stdout, /^content-type: application\/json$/m);
    assert.match(r.stdout, /^x-request-id: req_\S+$/m);
    assert.match(r.stdout, /^ {2}"event_type": "website_dialog",$/m, 'the body is pretty-printed');
    assert.match(r.stdout, /^ {4}"content": "9 to 6, Monday to Friday\.",$/m, 'the answer is printed');
    assert.match(r.stdout, /^ {2}"msg_id": "cli_[A-Za-z0-9_-]{16}",$/m, 'a fresh msg_id was made');
    assert.match(r.stderr, /--secret puts the secret on the command line/, 'a secret in argv is called out');
  });

  it('takes the secret from an environment variable, and the base URL serve printed', async () => {
    const r = await here(['send', '--client', 'acme', '--secret-env', 'ACME_SECRET', '--endpoint', serve.base, '--event', 'website_dialog', '--from', 'visitor-2', '--content', QUESTION], { ACME_SECRET: SECRET });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^POST http:\/\/127\.0\.0\.1:\d+\/custom-im\/chat-messages$/m);
    assert.equal(r.stderr, '', 'no warning without a secret in argv');
  });

  it('a wrong secret exits 1 and prints the invalid_signature problem, with what its hash means', async () => {
    const r = await run(['send', '--client', 'acme', '--secret', 'not-the-secret-0123456789abcdefghijk', '--endpoint', serve.endpoint, '--event', 'website_dialog', '--from', 'visitor-3', '--content', 'hi']);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /^HTTP 401 Unauthorized/m);
    assert.match(r.stdout, /^content-type: application\/problem\+json$/m);
    assert.match(r.stdout, /"code": "invalid_signature"/);
    const hash = /"signing_string_sha256": "([0-9a-f]{64})"/.exec(r.stdout)?.[1];
    assert.ok(hash, r.stdout);
    assert.match(r.stderr, new RegExp(`signing_string_sha256 equals ours \\(${hash}\\).*not an active secret of client acme`));
  });

  it('--dry-run prints the canonical form, signing string and signature the server computes, and sends nothing', async () => {
    // README's first signing test vector, through --file and a fixed --timestamp.
    const vector = { event_type: 'auto_dialog', msg_id: 'm-1001', from_user_id: 'cust-42', from_user_type: 2, content: 'How do I reset my password?', send_url: 'https://hooks.example.com/switchboard' };
    const file = join(dataDir, 'vector.json');
    writeFileSync(file, JSON.stringify(vector));
    const key = 'dGVzdC1zZWNyZXQtZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9u';
    const dry = await here(['send', '--client', 'acme', '--secret-env', 'K', '--file', file, '--timestamp', '1763715600', '--dry-run'], { K: key });
    assert.equal(dry.status, 0, dry.stderr);
    const line = (name: string, text = dry.stdout): string => new RegExp(`^${name}: +(.*)$`, 'm').exec(text)?.[1] ?? assert.fail(`no ${name}: in ${text}`);
    const canonical = canonicalJson(vector);
    assert.equal(line('canonical'), canonical);
    assert.equal(line('signing_string'), signingString(1763715600, 'acme', canonical));
    assert.equal(line('signature'), sign(hmacKey(key), signingString(1763715600, 'acme', canonical)));
    assert.equal(line('signature'), 'd920118d3b8f3addb78634fee85dad9cf895d585c0da94c206eaff5057eae958', 'README vector 1');
    assert.equal(line('signature'), signBody('acme', key, vector, 1763715600)['signature'], 'an integrator signing from the protocol text agrees');
    assert.match(dry.stdout, /^dry run: nothing was sent$/m);

    // Now: the body it printed is what the server accepts, and it was not sent before.
    const nowhere = join(dataDir, 'no-such-data-dir');
    const now = await run(['send', '--client', 'acme', '--secret', SECRET, '--event', 'website_dialog', '--from', 'visitor-4', '--content', QUESTION, '--dry-run'], { SWITCHBOARD_DATA_DIR: nowhere });
    assert.equal(now.status, 0, now.stderr);
    assert.equal(line('endpoint', now.stdout), 'http://127.0.0.1:8787/custom-im/chat-messages', 'the protocol default without a data folder');
    const res = await fetch(serve.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: line('body', now.stdout) });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('idempotent-replayed'), null, 'the dry run sent nothing');
    assert.equal(((await res.json()) as { reply: { content: string } }).reply.content, ANSWER);
  });

  it('an auto_dialog without send_url for a client without a default names the command that sets one', async () => {
    const r = await here(['send', '--client', 'bare', '--secret-env', 'S', '--endpoint', serve.endpoint, '--event', 'auto_dialog', '--from', 'cust-9', '--content', 'hello'], { S: BARE_SECRET });
    assert.equal(r.status, 1);
    assert.match(r.stdout, /"code": "validation_failed"/);
    assert.match(r.stdout, /client bare has no default send_url configured; put send_url in this message, or set a default with `npm run cli -- clients set bare --send-url URL`/);
  });

  it('nothing listening at the endpoint: send waits --wait seconds saying so once, then exits 3 with what to check', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/custom-im/chat-messages`;
    const r = await here(['send', '--client', 'acme', '--secret-env', 'S', '--endpoint', `http://127.0.0.1:${port}/`, '--event', 'website_dialog', '--from', 'v', '--content', 'hi', '--wait', '1'], { S: SECRET });
    assert.equal(r.status, 3);
    assert.deepEqual(r.stderr.trim().split('\n'), [
      `waiting for ${url} to accept connections (up to 1 s): serve prints "endpoint:" and "console:" when it is ready`,
      `error: no answer from ${url}: nothing listens there (connect ECONNREFUSED 127.0.0.1:${port}, still after 1 s); is serve running? check --endpoint against the "endpoint:" line serve printed`,
    ]);
    const once = await here(['send', '--client', 'acme', '--secret-env', 'S', '--endpoint', url, '--event', 'website_dialog', '--from', 'v', '--content', 'hi', '--wait', '0'], { S: SECRET });
    assert.equal(once.status, 3);
    assert.doesNotMatch(once.stderr, /waiting for/, '--wait 0 tries once');
    assert.match(once.stderr, /^error: no answer from .*: nothing listens there \(connect ECONNREFUSED [^)]*\); is serve running\?/m);
  });

  it('sent while serve is still starting, send waits for it and then gets the answer (the quick start pasted at once)', async () => {
    const late = mkdtempSync(join(tmpdir(), 'sb-send-late-'));
    assert.equal((await cliHere(late, 'clients', 'add', 'acme', '--secret', SECRET)).status, 0);
    assert.equal((await cliHere(late, 'kb', 'add', '--question', QUESTION, '--answer', ANSWER)).status, 0);
    const port = await closedPort();
    const child = spawn(process.execPath, ['src/main/cli/index.ts', 'send', '--client', 'acme', '--secret-env', 'S', '--endpoint', `http://127.0.0.1:${port}`, '--event', 'website_dialog', '--from', 'visitor-late', '--content', QUESTION, '--wait', '60'], {
      cwd: ROOT,
      env: { ...process.env, S: SECRET },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = once(child, 'exit');
    // Start the server only once send has said it is waiting: the order a reader who pasted it all at once sees.
    const [waiting] = await once(createInterface({ input: child.stderr }), 'line');
    assert.equal(waiting, `waiting for http://127.0.0.1:${port}/custom-im/chat-messages to accept connections (up to 60 s): serve prints "endpoint:" and "console:" when it is ready`);
    let stderrRest = '';
    child.stderr.on('data', (c: Buffer) => (stderrRest += c.toString()));
    const server = await spawnServe(late, ['--port', String(port)]);
    try {
      const [status] = await exited;
      assert.equal(status, 0, stdout + stderrRest);
      assert.match(stdout, /^HTTP 200 OK \(\d+ ms\)$/m);
      assert.match(stdout, /^ {4}"content": "9 to 6, Monday to Friday\.",$/m);
      assert.equal(stderrRest, '', 'one waiting line, nothing more');
    } finally {
      server.child.kill('SIGTERM');
      await server.exit();
    }
  });

  it('--nickname, --to-nickname and --group-name put the description\'s display names into the signed message_info', async () => {
    const names = ['--nickname', 'Nora', '--to-nickname', 'Printer desk', '--group-name', 'Printer support'];
    const dry = await here(['send', '--client', 'acme', '--secret-env', 'S', '--event', 'auto_dialog', '--group', 'R:1069605174', '--from', 'wxid_8g2k', '--content', 'hi', '--msg-id', 'm-names', '--timestamp', '1763715600', '--dry-run', ...names], { S: SECRET });
    assert.equal(dry.status, 0, dry.stderr);
    const info = { content: 'hi', event_type: 'auto_dialog', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora', from_user_type: 2, group_id: 'R:1069605174', group_name: 'Printer support', msg_id: 'm-names', to_user_nickname: 'Printer desk' };
    assert.match(dry.stdout, new RegExp(`^canonical: +${canonicalJson(info).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(dry.stdout, new RegExp(`^signature: +${sign(hmacKey(SECRET), signingString(1763715600, 'acme', canonicalJson(info)))}$`, 'm'));

    // The server takes them: a real website_dialog with the names is answered.
    const sent = await here(['send', '--client', 'acme', '--secret-env', 'S', '--endpoint', serve.endpoint, '--event', 'website_dialog', '--from', 'visitor-nora', '--content', QUESTION, '--nickname', 'Nora', '--to-nickname', 'Printer desk'], { S: SECRET });
    assert.equal(sent.status, 0, sent.stdout + sent.stderr);
    assert.match(sent.stdout, /^HTTP 200 OK/m);
  });

  it('the receive tool gets a real auto_dialog delivery, verifies it, and answers --status', async () => {
    const receiver = await startReceive(['--client', 'acme', '--secret-env', 'S', '--status', '202'], { S: SECRET });
    try {
      assert.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
      const sent = await here(['send', '--client', 'acme', '--secret-env', 'S', '--endpoint', serve.endpoint, '--event', 'auto_dialog', '--from', 'cust-1', '--content', QUESTION, '--send-url', `${receiver.url}hook`], { S: SECRET });
      assert.equal(sent.status, 0, sent.stdout + sent.stderr);
      assert.match(sent.stdout, /"reason": "scheduled"/);
      await receiver.waitFor(/answered 202/);
      const out = receiver.output();
      assert.match(out, /^--- delivery 1: POST \/hook at \d{4}-\d\d-\d\dT/m);
      assert.match(out, /^idempotency-key: r_\S+$/m);
      assert.match(out, /^ {4}"content": "9 to 6, Monday to Friday\.",$/m, 'the pretty body');
      assert.match(out, /^signature ok \(client acme\)$/m);
      assert.match(out, /^timestamp fresh: -?\d+ s from this machine's clock \(window ±300 s\)$/m);
      // receive prints its answer as it sends it; the server records the attempt once it has read it.
      const listed = await eventually(async () => {
        const out = (await cliHere(dataDir, 'deliveries', 'list')).stdout;
        return /sent\s+1\s+202\s/.test(out) && out;
      }, 'the delivery recorded as sent');
      assert.match(listed, /sent\s+1\s+202\s/, 'the server saw the status receive answered');
    } finally {
      assert.equal(await receiver.stop(), 0, receiver.output());
    }
    assert.match(receiver.output(), /SIGTERM: stopped after 1 delivery, 0 of them failed verification/);
  });

  it('with a wrong secret receive says the signature does not verify; a stale one is not fresh; it exits 1', async () => {
    const wrong = 'an-old-secret-0123456789abcdefghijklmnop';
    const receiver = await startReceive(['--client', 'acme', '--secret', wrong]);
    try {
      const sent = await here(['send', '--client', 'acme', '--secret-env', 'S', '--endpoint', serve.endpoint, '--event', 'auto_dialog', '--from', 'cust-2', '--content', QUESTION, '--send-url', receiver.url], { S: SECRET });
      assert.equal(sent.status, 0, sent.stdout + sent.stderr);
      await receiver.waitFor(/answered 200/);
      assert.match(receiver.output(), /^signature does NOT verify with the secret given for client acme \(signing_string sha256 [0-9a-f]{64}\)/m);
      assert.match(receiver.output(), /^a real receiver should answer 503 to this delivery, not a 4xx: any 4xx is final/m);

      // Signed right, but 10 minutes old: a replay, or a clock that is off.
      const old = Math.floor(Date.now() / 1000) - 600;
      const stale = signBody('acme', wrong, { msg_id: 'r_old', content: 'late', event_type: 'auto_dialog', from_user_type: 4, to_user_id: 'c' }, old);
      const res = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'r_old' }, body: JSON.stringify(stale) });
      assert.equal(res.status, 200);
      await receiver.waitFor(/delivery 2[\s\S]*answered 200/);
      assert.match(receiver.output(), /delivery 2[\s\S]*^signature ok \(client acme\)$[\s\S]*^timestamp NOT fresh: 60\d s from this machine's clock, outside ±300 s/m);
    } finally {
      assert.equal(await receiver.stop(), 1, 'a delivery that failed verification makes the exit status 1');
    }
    assert.match(receiver.output(), /stopped after 2 deliveries, 2 of them failed verification/);
  });
});

describe('send and receive: bad flags and failures', () => {
  it('a bad flag gets one line naming it and exit status 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['send', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'hi'], /^error: --client ID is required$/],
      [['send', '--client', 'acme', '--event', 'website_dialog', '--from', 'v', '--content', 'hi'], /^error: --secret S \(or --secret-env NAME, or --secret-stdin\) is required/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'web', '--from', 'v', '--content', 'hi'], /^error: --event must be one of auto_dialog, assist_dialog, website_dialog, cmd_dialog, got "web"$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--from', 'v'], /^error: --event is required/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'auto_dialog', '--from', 'v', '--from-type', '7', '--content', 'x'], /^error: --from-type must be 1, 2, 3 or 4/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--content', 'x'], /^error: --from USER or --group ID is required/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'cmd_dialog', '--from', 'v'], /^error: --content is required: the command, e\.g\. --content stop_auto_reply$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--send-url', 'http://h/x'], /^error: --send-url is allowed only with --event auto_dialog$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'auto_dialog', '--from', 'v', '--content', 'x', '--send-url', 'hook'], /^error: --send-url must be an absolute http\(s\) URL, got "hook"$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--endpoint', 'localhost:8787'], /^error: --endpoint must be an absolute http\(s\) URL/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--timestamp', '1763715600000'], /^error: --timestamp 1763715600000 looks like milliseconds/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--nickname', 'N'.repeat(201)], /^error: --nickname must be 1\.\.200 characters and not blank, got 201$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--group-name', '  '], /^error: --group-name must be 1\.\.200 characters and not blank, got 2$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--wait', 'soon'], /^error: --wait must be whole seconds \(0 tries once\), got "soon"$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--file', '/no/such/file.json'], /^error: --file \/no\/such\/file\.json: cannot read it/],
      [['send', '--client', 'acme', '--secret-env', 'NOPE_UNSET', '--event', 'website_dialog', '--from', 'v', '--content', 'x'], /^error: --secret-env NOPE_UNSET: that environment variable is unset or empty$/],
      [['send', '--client', 'acme', '--secret', 'a', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x'], /^error: give the secret one way only, not --secret and --secret-env$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--model', 'x'], /^error: send has no option --model; see npm run cli -- send --help$/],
      [['send', '--client'], /^error: --client needs a value$/],
      [['send', '--client', 'acme', 'hello world'], /^error: send takes flags only, got "hello world"/],
      [['receive', '--port', '70000'], /^error: --port must be a port number 0\.\.65535/],
      [['receive', '--status', '99'], /^error: --status must be an HTTP status 200\.\.599, got "99"$/],
      [['receive', '--client', 'acme'], /^error: --client needs --secret S/],
      [['receive', '--secret-env', 'S'], /^error: a secret needs --client ID/],
      [['receive', '--data-dir', '/tmp'], /^error: receive has no option --data-dir; see npm run cli -- receive --help$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--form', 'v', '--content', 'x'], /^error: send has no option --form \(did you mean --from\?\); see npm run cli -- send --help$/],
      [['send', '--client', 'acme', '--secret-env', 'S', '--event', 'auto_dialog', '--from', 'v', '--content', 'x', '--sendurl', 'http://h/'], /^error: send has no option --sendurl \(did you mean --send-url\?\)/],
      [['receive', '--prot', '9000'], /^error: receive has no option --prot \(did you mean --port\?\); see npm run cli -- receive --help$/],
    ];
    const results: Run[] = [];
    for (const [args] of cases) results.push(await here(args, { S: SECRET }));
    cases.forEach(([args, expected], i) => {
      const r = results[i]!;
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      const lines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('note: '));
      assert.equal(lines.length, 1, `one line: ${r.stderr}`);
      assert.match(lines[0]!, expected, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    });
  });

  it('receive on a port in use exits 1, naming the address', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const r = await run(['receive', '--port', String(port)]);
      assert.equal(r.status, 1);
      assert.equal(r.stderr.trim(), `error: cannot listen on 127.0.0.1:${port} (--host, --port): that address is already in use`);
    } finally {
      busy.close();
    }
  });

  it('need no data folder, and are in the help', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'sb-nodata-')), 'never-made');
    const dry = await here(['send', '--data-dir', missing, '--client', 'acme', '--secret-env', 'S', '--event', 'website_dialog', '--from', 'v', '--content', 'x', '--dry-run'], { S: SECRET });
    assert.equal(dry.status, 0, dry.stderr);
    assert.equal(existsSync(missing), false, 'send created no data folder');
    const help = await here(['--help']);
    assert.match(help.stdout, /^ {2}send --client ID --secret S \[--endpoint URL\] --event EVENT_TYPE$/m);
    assert.match(help.stdout, /\[--content TEXT\] \[--msg-id ID\] \[--send-url URL\] \[--file MESSAGE_INFO\.json\]/);
    assert.match(help.stdout, /\[--nickname NAME\] \[--to-nickname NAME\] \[--group-name NAME\]/);
    assert.match(help.stdout, /^ {2}receive \[--port 9000\] \[--host 127\.0\.0\.1\] \[--client ID --secret S\] \[--status 200\]$/m);
    const sendHelp = (await here(['send', '--help'])).stdout;
    assert.match(sendHelp, /--dry-run +prints the canonical message_info/);
    assert.match(sendHelp, /^ {2}--nickname +the sender's display name \(from_user_nickname\), up to 200 characters$/m);
    assert.match(sendHelp, /^ {2}--to-nickname +the receiver's display name \(to_user_nickname\), up to 200 characters$/m);
    assert.match(sendHelp, /^ {2}--group-name +the group conversation's title \(group_name\), up to 200 characters$/m);
    assert.match(sendHelp, /^ {2}--wait +while nothing listens at the endpoint yet/m);
    assert.match((await here(['receive', '--help'])).stdout, /Exit status: 0 when every delivery verified/);
  });

  it('point at the sections of docs/protocol.md by their numbers there', async () => {
    const headings = new Map([...readFileSync(join(ROOT, 'docs', 'protocol.md'), 'utf8').matchAll(/^## (\d+)\. (.+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const topics: Array<[string, RegExp]> = [
      ['send', /^Signing$/],
      ['receive', /^Deliveries to your send_url$/],
    ];
    for (const [command, topic] of topics) {
      const help = (await here([command, '--help'])).stdout;
      const refs = [...help.matchAll(/section (\d+)/g)];
      assert.ok(refs.length > 0, `${command} --help names a section`);
      for (const [text, n] of refs) {
        assert.match(help, new RegExp(`docs/protocol\\.md ${text}`), `${command}: "${text}" says which document`);
        assert.match(headings.get(n!) ?? '(none)', topic, `${command} --help: ${text} of docs/protocol.md`);
      }
    }
  });
});

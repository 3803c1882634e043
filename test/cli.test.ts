import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { cli, secretFrom } from './helpers/processes.ts';
import { cliHere } from './helpers/cli-here.ts';

const ROOT = new URL('../', import.meta.url).pathname;
import { openDatabase } from '../src/main/store/db.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'sb-cli-'));

// Most cases run the CLI in this process (cliHere: the same runCli, a Node start cheaper each). Three
// spawn a real one: a success (exit 0, stdout), usage errors (exit 2, stderr) and the secret read from
// the process's own environment and standard input.

describe('operator CLI (section 9)', () => {
  it('clients add prints a generated secret once; list never shows it', () => {
    const d = dir();
    const add = cli(d, 'clients', 'add', 'acme', '--send-url', 'https://hooks.example.com/in', '--bound-account', 'bot-1', '--group-policy', 'all');
    assert.equal(add.status, 0, add.stderr);
    const secret = secretFrom(add.stdout);
    assert.match(secret, /^[A-Za-z0-9_-]{43,}$/, '32 random bytes, base64url');
    assert.match(add.stdout, /shown once/);
    const list = cli(d, 'clients', 'list');
    assert.equal(list.status, 0);
    assert.match(list.stdout, /acme\s+enabled\s+1\s+https:\/\/hooks\.example\.com\/in\s+bot-1\s+all/);
    assert.ok(!list.stdout.includes(secret));
    const raw = readFileSync(join(d, 'switchboard.db'));
    assert.ok(!raw.includes(Buffer.from(secret)), 'the secret is not stored in clear text');
  });

  it('clients add refuses duplicates, short secrets, bad URLs and unknown group policies with clear messages', async () => {
    const d = dir();
    assert.equal((await cliHere(d, 'clients', 'add', 'acme')).status, 0);
    const dup = await cliHere(d, 'clients', 'add', 'acme');
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /already exists/);
    assert.match((await cliHere(d, 'clients', 'add', 'b', '--secret', 'short')).stderr, /at least 32 bytes/);
    assert.match((await cliHere(d, 'clients', 'add', 'c', '--send-url', 'http://169.254.169.254/x')).stderr, /link-local/);
    assert.match((await cliHere(d, 'clients', 'add', 'e', '--group-policy', 'sometimes')).stderr, /must be one of mention, all, never, got "sometimes"/);
    assert.match((await cliHere(d, 'clients', 'add', 'bad id!')).stderr, /must be 1\.\.128 characters/);
    assert.match((await cliHere(d, 'clients', 'frobnicate')).stderr, /unknown clients command/);
    assert.equal((await cliHere(d, 'clients', 'add', 'x', '--nope')).stderr, 'error: clients has no option --nope; see npm run cli -- --help (it lists every command and setting)\n');
  });

  it('a mistyped flag gets the flag it is close to (2 edits or fewer) as a suggestion', async () => {
    const d = dir();
    const cases: Array<[string[], string]> = [
      [['engines', 'add', 'x', '--model', 'm', '--retires', '2'], 'engines has no option --retires (did you mean --retries?)'],
      [['clients', 'set', 'acme', '--bound-acount', 'bot-1'], 'clients has no option --bound-acount (did you mean --bound-account?)'],
      [['kb', 'add', '--questoin', 'q', '--answer', 'a'], 'kb has no option --questoin (did you mean --question?)'],
      [['--data-dri', d, 'clients', 'list'], 'clients has no option --data-dri (did you mean --data-dir?)'],
      [['clients', 'add', 'x', '--zz'], 'clients has no option --zz; see'],
    ];
    for (const [args, expected] of cases) {
      const r = await cliHere(d, ...args);
      assert.equal(r.status, 2, args.join(' '));
      assert.ok(r.stderr.startsWith(`error: ${expected}`), `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    }
  });

  it('clients add --secret keeps the given secret; rotate issues a new one and keeps two active', async () => {
    const d = dir();
    const given = 'a-secret-the-integrator-already-has-000000';
    assert.equal(secretFrom((await cliHere(d, 'clients', 'add', 'acme', '--secret', given)).stdout), given);
    const rotated = await cliHere(d, 'clients', 'rotate', 'acme');
    assert.equal(rotated.status, 0);
    assert.notEqual(secretFrom(rotated.stdout), given);
    assert.match(rotated.stdout, /previous secret stays valid/);
    assert.match((await cliHere(d, 'clients', 'list')).stdout, /acme\s+enabled\s+2/);
    await cliHere(d, 'clients', 'rotate', 'acme', '--retire-previous');
    assert.match((await cliHere(d, 'clients', 'list')).stdout, /acme\s+enabled\s+1/);
    assert.match((await cliHere(d, 'clients', 'rotate', 'ghost')).stderr, /no client "ghost"/);
  });

  it('clients add and rotate take a chosen secret from the environment or standard input, and warn when it is on the command line', async () => {
    const d = dir();
    const run = (args: string[], options: { env?: Record<string, string>; input?: string } = {}) => {
      const r = spawnSync(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', d], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...options.env }, input: options.input ?? '' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const fromEnv = 'a-secret-from-the-environment-0000000000000';
    const added = run(['clients', 'add', 'acme', '--secret-env', 'ACME_SECRET'], { env: { ACME_SECRET: fromEnv } });
    assert.equal(added.status, 0, added.stderr);
    assert.equal(secretFrom(added.stdout), fromEnv);
    assert.equal(added.stderr, '', 'no warning: the secret was never on the command line');
    const fromStdin = 'a-secret-piped-in-from-a-password-manager-00';
    const rotated = run(['clients', 'rotate', 'acme', '--secret-stdin'], { input: `${fromStdin}\n` });
    assert.equal(secretFrom(rotated.stdout), fromStdin);
    // The rest needs no process of its own: the environment and standard input were the process's above.
    const onArgv = await cliHere(d, 'clients', 'add', 'beta', '--secret', 'a-secret-typed-on-the-command-line-0000000');
    assert.equal(onArgv.status, 0);
    assert.match(onArgv.stderr, /--secret puts the secret on the command line \(ps, shell history\)/);
    assert.match((await cliHere(d, 'clients', 'add', 'gamma', '--secret-env', 'UNSET_SECRET_NAME')).stderr, /UNSET_SECRET_NAME: that environment variable is unset or empty/);
    assert.match((await cliHere(d, 'clients', 'add', 'delta', '--secret', 'x', '--secret-stdin')).stderr, /give the secret one way only/);
  });

  it('clients disable and enable', async () => {
    const d = dir();
    await cliHere(d, 'clients', 'add', 'acme');
    assert.equal((await cliHere(d, 'clients', 'disable', 'acme')).stdout.trim(), 'client acme disabled');
    assert.match((await cliHere(d, 'clients', 'list')).stdout, /acme\s+disabled/);
    assert.equal((await cliHere(d, 'clients', 'enable', 'acme')).stdout.trim(), 'client acme enabled');
    assert.equal((await cliHere(d, 'clients', 'enable', 'ghost')).status, 2);
  });

  it('kb add and kb import of JSON and CSV (quotes, commas, newlines, Chinese)', async () => {
    const d = dir();
    assert.match((await cliHere(d, 'kb', 'add', '--question', 'Opening hours?', '--answer', '9 to 6')).stdout, /entry 1 added/);
    assert.match((await cliHere(d, 'kb', 'add', '--question', 'only')).stderr, /needs --question and --answer/);
    const json = join(d, 'kb.json');
    writeFileSync(json, JSON.stringify([{ question: '如何退款？', answer: '3 到 5 个工作日。' }, { question: 'Refund?', answer: 'Within 5 days.' }]));
    assert.match((await cliHere(d, 'kb', 'import', json)).stdout, /imported 2 entries/);
    const csv = join(d, 'kb.csv');
    writeFileSync(csv, '\uFEFFquestion,answer\r\n"Price, per seat?","It is ""$12"".\nBilled monthly."\r\nInvoice?,Orders page\r\n');
    assert.match((await cliHere(d, 'kb', 'import', csv)).stdout, /imported 2 entries/);
    const list = (await cliHere(d, 'kb', 'list')).stdout;
    assert.match(list, /Price, per seat\?\tIt is "\$12"\. Billed monthly\./);
    assert.match(list, /如何退款？/);
  });

  it('a malformed import file is refused whole, naming the line at fault, and nothing is imported', async () => {
    const d = dir();
    const cases: Array<[string, string, RegExp]> = [
      ['bad.csv', 'question,answer\nok,fine\n"unterminated,x\n', /line 3: quoted field is never closed/],
      ['cols.csv', 'question,answer\na,b\nc,d,e\n', /line 3: expected 2 fields, found 3/],
      ['empty.csv', 'question,answer\na,b\n ,x\n', /line 3: question must not be empty/],
      ['header.csv', 'q,a\nx,y\n', /line 1: header must be "question,answer"/],
      ['syntax.json', '[\n {"question": "a", "answer": "b"},\n {"question": "c" "answer": "d"}\n]', /not valid JSON at line 3/],
      ['shape.json', '[\n  {"question": "a", "answer": "b"},\n  {"question": "c"}\n]', /entry 2 \(line 3\): answer is required/],
      ['notarray.json', '{"question": "a", "answer": "b"}', /must hold an array/],
      ['kb.txt', 'whatever', /unknown file type/],
    ];
    for (const [name, content, expected] of cases) {
      const file = join(d, name);
      writeFileSync(file, content);
      const r = await cliHere(d, 'kb', 'import', file);
      assert.equal(r.status, 1, name);
      assert.match(r.stderr, expected, name);
      assert.match(r.stderr, /nothing was imported/, name);
    }
    assert.match((await cliHere(d, 'kb', 'import', join(d, 'missing.json'))).stderr, /cannot read/);
    const db = openDatabase(join(d, 'switchboard.db'));
    assert.equal((db.prepare('SELECT count(*) AS n FROM kb_entries').get() as { n: number }).n, 0);
    db.close();
  });

  it('prints usage for no command and for help (a real process: its exit status and output)', () => {
    const d = dir();
    const bare = cli(d);
    assert.match(bare.stdout, /usage: npm run cli/);
    assert.equal(bare.status, 2);
    assert.equal(cli(d, '--help').status, 0);
    const unknown = cli(d, 'launch');
    assert.match(unknown.stderr, /unknown command "launch"/);
    assert.equal(unknown.status, 2);
    assert.equal(unknown.stdout, '');
  });

  it('--help lists every engines add flag, --handoff-marker included, and engines add stores it', async () => {
    const d = dir();
    const help = (await cliHere(d, '--help')).stdout;
    for (const flag of ['--model', '--base-url', '--api-key-env', '--api-key-stdin', '--system-prompt', '--temperature', '--max-tokens', '--timeout-ms', '--context-tokens', '--grounding', '--retries', '--handoff-marker']) {
      assert.match(help, new RegExp(`[\\s[]${flag}[\\s\\]]`), `${flag} in --help`);
    }
    const added = await cliHere(d, 'engines', 'add', 'local', '--model', 'm', '--handoff-marker', '<<HUMAN>>');
    assert.equal(added.status, 0, added.stderr);
    const db = (await import('../src/main/store/index.ts')).createStore(openDatabase(join(d, 'switchboard.db')));
    assert.equal(db.engines.get('local')?.config.handoffMarker, '<<HUMAN>>');
    db.close();
  });
});

describe('per-client settings and deliveries from the CLI (issue 3)', () => {
  it('clients set changes only the given settings; clients show lists them all', async () => {
    const d = dir();
    await cliHere(d, 'clients', 'add', 'acme', '--send-url', 'https://hooks.example.com/in');
    const set = await cliHere(d, 'clients', 'set', 'acme', '--group-policy', 'all', '--bot-ids', 'bot-a, bot-b', '--quiet-seconds', '1.5', '--fallback-text', 'One moment please');
    assert.equal(set.status, 0, set.stderr);
    const show = (await cliHere(d, 'clients', 'show', 'acme')).stdout;
    assert.match(show, /send-url\s+https:\/\/hooks\.example\.com\/in/);
    assert.match(show, /group-policy\s+all/);
    assert.match(show, /bot-ids\s+bot-a, bot-b/);
    assert.match(show, /quiet-seconds\s+1\.5/);
    assert.match(show, /quiet-max-seconds\s+10/);
    assert.match(show, /pause-minutes\s+10/);
    assert.match(show, /fallback-text\s+One moment please/);
    await cliHere(d, 'clients', 'set', 'acme', '--send-url', '', '--fallback-text', '');
    assert.match((await cliHere(d, 'clients', 'show', 'acme')).stdout, /send-url\s+\(none/);
  });

  it('a bad setting is refused with the values it accepts, and nothing changes', async () => {
    const d = dir();
    await cliHere(d, 'clients', 'add', 'acme');
    const cases: Array<[string[], RegExp]> = [
      [['--group-policy', 'sometimes'], /--group-policy must be one of mention, all, never, got "sometimes"/],
      [['--pause-minutes=-1'], /--pause-minutes must be a number from 0 to 10080, got "-1"/],
      [['--quiet-seconds', 'soon'], /--quiet-seconds must be a number from 0 to 600/],
      [['--allowed-origins', 'https://a.example.com/path'], /origins like https:\/\/hooks\.example\.com/],
      [['--send-url', 'ftp://x'], /--send-url must be an absolute http\(s\) URL/],
    ];
    for (const [flags, expected] of cases) {
      const r = await cliHere(d, 'clients', 'set', 'acme', ...flags);
      assert.equal(r.status, 2, flags.join(' '));
      assert.match(r.stderr, expected);
    }
    assert.match((await cliHere(d, 'clients', 'show', 'acme')).stdout, /group-policy\s+mention/);
    assert.match((await cliHere(d, 'clients', 'set', 'ghost', '--group-policy', 'all')).stderr, /no client "ghost"/);
  });

  it('every CLI error names the flag, never a schema key', async () => {
    const d = dir();
    await cliHere(d, 'clients', 'add', 'acme');
    const long = (n: number): string => 'a'.repeat(n);
    const cases: Array<[string[], RegExp]> = [
      [['engines', 'add', 'x', '--model', 'm', '--base-url', 'nope'], /^error: --base-url must be an absolute URL \(http:\/\/host:port\/path\), got "nope"$/m],
      [['engines', 'add', 'x'], /^error: --model is required: the chat model that writes the answers \(unless answers come from the knowledge base, "kb"\)$/m],
      [['engines', 'add', 'x', '--model', 'm', '--temperature', '5', '--max-tokens', '1.5'], /^error: --temperature must be at most 2, got "5"; --max-tokens must be a whole number, got "1\.5"$/m],
      [['engines', 'add', 'x', '--model', 'm', '--timeout-ms', '1', '--context-tokens', '1'], /--timeout-ms must be at least 100, got "1"; --context-tokens must be at least 100, got "1"/],
      [['engines', 'add', 'x', '--model', 'm', '--handoff-marker', 'ab'], /^error: --handoff-marker must be at least 3 characters, got "ab"$/m],
      [['engines', 'add', 'x', '--model', 'm', '--grounding', '50', '--retries', '9'], /^error: --grounding must be at most 20, got "50"; --retries must be at most 5, got "9"$/m],
      [['engines', 'add', 'x', '--model', 'm', '--system-prompt', long(20_001)], /^error: --system-prompt must be at most 20000 characters$/m],
      [['clients', 'set', 'acme', '--bound-account', long(129)], /^error: --bound-account must be at most 128 characters$/m],
      [['clients', 'set', 'acme', '--bot-ids', `ok,${long(129)}`], /^error: --bot-ids \(item 2\) must be at most 128 characters$/m],
      [['clients', 'add', 'b', '--fallback-text', long(2001)], /^error: --fallback-text must be at most 2000 characters$/m],
      [['clients', 'add', 'b', '--engine', long(65)], /^error: --engine must be at most 64 characters/m],
      [['clients', 'add', 'b', '--send-url', `https://h.example.com/${long(2048)}`], /^error: --send-url must be at most 2048 characters$/m],
    ];
    for (const [args, expected] of cases) {
      const r = await cliHere(d, ...args);
      assert.equal(r.status, 2, args.join(' ').slice(0, 80));
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /baseUrl|maxTokens|timeoutMs|contextTokens|handoffMarker|groundingEntries|systemPrompt|boundAccount|botIds|fallbackText|sendUrl|Too big|Too small|Invalid input/, args[0]);
    }
  });

  it('deliveries list, show and retry', async () => {
    const d = dir();
    assert.match((await cliHere(d, 'deliveries', 'list')).stdout, /no deliveries/);
    assert.match((await cliHere(d, 'deliveries', 'list', '--state', 'lost')).stderr, /--state must be one of pending, sent, dead, cancelled/);
    const db = (await import('../src/main/store/index.ts')).createStore(openDatabase(join(d, 'switchboard.db')));
    db.clients.create('acme', (await import('../src/shared/client-settings.ts')).DEFAULT_CLIENT_SETTINGS, 0);
    db.conversations.create({ id: 'c_1', clientId: 'acme', channel: 'im', peer: 'u:x', groupId: null, customerId: 'x', autoReply: 'active', now: 0 });
    const replyId = db.messages.insertReply({ conversationId: 'c_1', kind: 'auto', msgId: 'r_1', replyTo: ['m1'], afterMessageId: 1, content: 'hi', handoff: false, engine: 'kb', confidence: 1, sources: [], createdAt: 0 });
    const id = db.deliveries.insert({ replyId, replyMsgId: 'r_1', conversationId: 'c_1', clientId: 'acme', sendUrl: 'https://hooks.example.com/in', messageInfo: '{}', state: 'pending', nextAttemptAt: 0, createdAt: 0 });
    db.deliveries.recordAttempt({ deliveryId: id, attempt: 1, startedAt: 0, durationMs: 12.5, status: 404, error: 'HTTP 404', outcome: 'dead', state: 'dead', nextAttemptAt: 0, now: 0 });
    db.close();
    assert.match((await cliHere(d, 'deliveries', 'list', '--state', 'dead')).stdout, new RegExp(`${id}\\s+dead\\s+1\\s+HTTP 404`));
    assert.match((await cliHere(d, 'deliveries', 'show', String(id))).stdout, /1\s+\S+\s+12\.5\s+404\s+dead\s+HTTP 404/);
    assert.match((await cliHere(d, 'deliveries', 'retry', String(id))).stdout, /queued again/);
    assert.match((await cliHere(d, 'deliveries', 'list', '--state', 'pending')).stdout, new RegExp(`${id}\\s+pending`));
    assert.match((await cliHere(d, 'deliveries', 'retry', String(id))).stderr, /is pending; only dead deliveries can be retried/);
    assert.match((await cliHere(d, 'deliveries', 'retry', 'abc')).stderr, /a delivery ID/);
  });
});

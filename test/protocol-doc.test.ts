import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createHmac } from 'node:crypto';
import { canonicalJson, MAX_DEPTH } from '../src/main/auth/canonical-json.ts';
import { PROBLEM_CODES } from '../src/shared/problem-codes.ts';
import { LIMITS, EVENT_TYPES, fileInfoSchema, messageInfoSchema, quoteSchema } from '../src/shared/protocol/message-schema.ts';
import { REPLY_REASONS } from '../src/shared/conversation.ts';
import { MAX_AUTO_REPLIES_PER_MINUTE } from '../src/main/autoreply/decide.ts';
import { ATTEMPT_TIMEOUT_MS, RETRY_AFTER_MAX_MS, RETRY_SCHEDULE_MS } from '../src/main/delivery/retry-policy.ts';
import { serverConfigSchema } from '../src/main/config/server-config.ts';
import { DEFAULT_JSON_BOUNDS } from '../src/main/http/json-scan.ts';
import { DEFAULT_CLIENT_SETTINGS } from '../src/shared/client-settings.ts';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { SEND_USAGE } from '../src/main/cli/send-command.ts';
import { RECEIVE_USAGE } from '../src/main/cli/receive-command.ts';
import { DOC, block, blocks, has, importBlock, section, shape, tableRows, unquote } from './helpers/protocol-doc.ts';

/**
 * docs/protocol.md is the integrator's only reference: its code blocks run here against the real
 * server, and its tables are checked against the schemas, problem codes and settings.
 */
const execFileAsync = promisify(execFile);

interface Vector {
  client: string;
  timestamp: string;
  message_info: string;
  canonical: string;
  signing_string: string;
  signature: string;
}

const vectors: Vector[] = blocks('readme-vector').map((text) => {
  const fields: Record<string, string> = {};
  for (const line of text.trim().split('\n')) {
    const colon = line.indexOf(':');
    fields[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return fields as unknown as Vector;
});
const secret = /computed with secret `([^`]+)`/.exec(DOC)![1]!;

type Res = Awaited<ReturnType<Harness['post']>>;

/** The display names of protocol v1.2: optional strings of at most 200 characters. */
const DISPLAY_NAMES = ['from_user_nickname', 'to_user_nickname', 'group_name'];

const QUESTION = 'How do I reset my password?';
const ANSWER = 'Settings > Security > Reset password.';

describe('docs/protocol.md: signing, sending and responses against a running server', () => {
  let h: Harness;
  before(async () => {
    // Real time: the curl and Python examples sign with the system clock.
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', {}, secret);
    h.admin.kb.add(QUESTION, ANSWER, 0);
  });
  after(() => h.stop());

  it('has signing test vectors, and our implementation reproduces each one', () => {
    assert.ok(vectors.length >= 2);
    for (const v of vectors) {
      const canonical = canonicalJson(JSON.parse(v.message_info));
      assert.equal(canonical, v.canonical);
      assert.equal(`${v.timestamp}.${v.client}.${canonical}`, v.signing_string);
      assert.equal(createHmac('sha256', secret).update(v.signing_string).digest('hex'), v.signature);
    }
  });

  it('the Node example signs the vectors identically, and its sendMessage is answered by the server', async () => {
    type NodeExample = {
      signRequest: (c: string, s: string, i: unknown, t?: number) => Record<string, unknown>;
      sendMessage: (u: string, c: string, s: string, i: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;
    };
    const { mod, cleanup } = await importBlock<NodeExample>('node', block('readme-node'));
    try {
      for (const v of vectors) {
        assert.equal(mod.signRequest(v.client, secret, JSON.parse(v.message_info), Number(v.timestamp))['signature'], v.signature);
      }
      const r = await mod.sendMessage(h.url, 'acme', secret, { event_type: 'website_dialog', msg_id: mid('doc-node'), from_user_id: 'visitor-9', content: QUESTION });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal((r.body['reply'] as { content?: string } | undefined)?.content, ANSWER);
    } finally {
      cleanup();
    }
  });

  it('the Python example reproduces the vectors, and its send_message is answered by the server', { skip: has('python3') ? false : 'python3 is not installed' }, async () => {
    const python = block('readme-python');
    const program = `${python}
import sys
for line in sys.stdin.read().splitlines():
    ts, client, info = line.split("\\t")
    body = sign_request(client, "${secret}", json.loads(info), int(ts))
    print(jcs(json.loads(info)) + "\\t" + body["signature"])
`;
    const input = vectors.map((v) => `${v.timestamp}\t${v.client}\t${v.message_info}`).join('\n');
    const run = spawnSync('python3', ['-c', program], { input, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    vectors.forEach((v, i) => assert.equal(lines[i], `${v.canonical}\t${v.signature}`));

    // Asynchronous: the server under test runs in this very process.
    const send = `${python}
import os
status, body = send_message(os.environ["URL"], "acme", os.environ["SECRET"],
    {"event_type": "website_dialog", "msg_id": os.environ["MSG_ID"], "from_user_id": "visitor-py", "content": "${QUESTION}"})
print(json.dumps({"status": status, "body": body}))
`;
    const out = await execFileAsync('python3', ['-c', send], { encoding: 'utf8', env: { ...process.env, URL: h.url, SECRET: secret, MSG_ID: mid('doc-py') } });
    const result = JSON.parse(out.stdout) as { status: number; body: { reply: { content: string; handoff: boolean } } };
    assert.equal(result.status, 200, out.stdout);
    assert.equal(result.body.reply.content, ANSWER);
  });

  it('the curl + openssl example is accepted by a running server', { skip: has('curl') && has('openssl') ? false : 'curl or openssl is not installed' }, async () => {
    const run = await execFileAsync('bash', ['-c', block('readme-curl')], {
      encoding: 'utf8',
      env: { ...process.env, SWITCHBOARD_URL: h.url, SWITCHBOARD_SECRET: secret },
    });
    const body = JSON.parse(run.stdout) as { event_type: string; reply: { content: string; handoff: boolean } };
    assert.equal(body.event_type, 'website_dialog');
    assert.equal(body.reply.handoff, false);
  });

  it("each SHA-256 one-liner gives invalid_signature's signing_string_sha256 for the integrator's own signing string", async () => {
    const v = vectors[0]!;
    const info = JSON.parse(v.message_info) as Record<string, unknown>;
    const res = await h.post(info, { secret: `${secret}-but-wrong` });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'invalid_signature');
    const served = res.body['signing_string_sha256'];
    assert.match(String(served), /^[0-9a-f]{64}$/);
    // What the integrator's code built: the same timestamp, client and canonical form.
    const signingString = `${h.now()}.acme.${v.canonical}`;
    const env = { ...process.env, SIGNING_STRING: signingString };

    const sh = await execFileAsync('bash', ['-c', block('readme-sha256-sh')], { encoding: 'utf8', env });
    assert.equal(sh.stdout.trim(), served, 'shell one-liner');

    const { mod, cleanup } = await importBlock<{ default: string }>('sha256', `const signingString = ${JSON.stringify(signingString)};\n${block('readme-sha256-node')}\nexport default mine;\n`);
    try {
      assert.equal(mod.default, served, 'Node one-liner');
    } finally {
      cleanup();
    }

    if (has('python3')) {
      const program = `import hashlib, os\nsigning_string = os.environ["SIGNING_STRING"]\n${block('readme-sha256-python')}\nprint(mine)\n`;
      const py = await execFileAsync('python3', ['-c', program], { encoding: 'utf8', env });
      assert.equal(py.stdout.trim(), served, 'Python one-liner');
    }
  });

  it('the example responses have the keys and value types of real responses, per event_type', async () => {
    const autoId = mid('doc-resp');
    const real: Record<string, Res['body']> = {
      auto_dialog: (await h.post({ event_type: 'auto_dialog', msg_id: autoId, from_user_id: 'cust-resp', from_user_type: 2, content: QUESTION, send_url: 'http://127.0.0.1:9/hook' })).body,
      assist_dialog: (await h.post({ event_type: 'assist_dialog', msg_id: autoId, from_user_id: 'cust-resp', from_user_type: 2, content: QUESTION })).body,
      website_dialog: (await h.post({ event_type: 'website_dialog', msg_id: mid('doc-resp'), from_user_id: 'visitor-resp', content: QUESTION })).body,
      cmd_dialog: (await h.post({ event_type: 'cmd_dialog', msg_id: mid('doc-resp'), from_user_id: 'agent-7', from_user_type: 3, to_user_id: 'cust-resp', content: 'stop_auto_reply' })).body,
    };
    for (const event of EVENT_TYPES) {
      const example = JSON.parse(block(`readme-response-${event}`)) as unknown;
      assert.deepEqual(shape(example), shape(real[event]), event);
    }
  });

  it('the message_info field table: every rule marked required or not allowed is what the server enforces', async () => {
    const rows = tableRows(section('### message_info fields'));
    const header = rows[0]!;
    const bases: Record<string, () => Record<string, unknown>> = {
      auto_dialog: () => ({ event_type: 'auto_dialog', msg_id: mid('doc-rule'), from_user_id: 'cust-rule', from_user_type: 2, content: QUESTION, send_url: 'http://127.0.0.1:9/hook' }),
      assist_dialog: () => ({ event_type: 'assist_dialog', msg_id: mid('doc-rule'), from_user_id: 'cust-rule', content: QUESTION }),
      website_dialog: () => ({ event_type: 'website_dialog', msg_id: mid('doc-rule'), from_user_id: 'visitor-rule', content: QUESTION }),
      cmd_dialog: () => ({ event_type: 'cmd_dialog', msg_id: mid('doc-rule'), from_user_id: 'cust-rule-cmd', content: 'stop_auto_reply' }),
    };
    const samples: Record<string, unknown> = { at_list: ['bot-acme'], send_url: 'http://127.0.0.1:9/hook', quote: { msg_id: 'q', message_type: 1 } };
    let checked = 0;
    for (const event of EVENT_TYPES) {
      const column = header.indexOf(event);
      assert.ok(column > 0, `a column for ${event}`);
      const base = bases[event]!;
      const ok = await h.post(base());
      assert.equal(ok.status, 200, `${event} base message: ${JSON.stringify(ok.body)}`);
      for (const row of rows.slice(1)) {
        const field = unquote(row[0]!);
        const cell = row[column]!;
        if (cell.startsWith('**required**')) {
          const info = base();
          assert.ok(field in info, `${event}: the doc requires ${field}, so the test's base message has it`);
          delete info[field];
          const r = await h.post(info);
          assert.equal(r.status, 400, `${event} without ${field}: ${JSON.stringify(r.body)}`);
          checked++;
        } else if (cell === 'not allowed') {
          assert.ok(field in samples, `a sample value for ${field}`);
          const r = await h.post({ ...base(), [field]: samples[field] });
          assert.equal(r.status, 400, `${event} with ${field}`);
          assert.equal(r.body.code, 'field_not_allowed', `${event} with ${field}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= 12, `${checked} rules checked`);
  });
});


describe('docs/protocol.md: tables and numbers match the code', () => {
  it('the message_info field table has a row for every field the schema knows, and no other', () => {
    const rows = tableRows(section('### message_info fields')).slice(1);
    const documented = rows.map((r) => unquote(r[0]!)).filter((f) => f !== 'any other field');
    const known = [
      ...Object.keys(messageInfoSchema.shape),
      ...Object.keys(fileInfoSchema.shape).map((k) => `files_info[].${k}`),
      ...Object.keys(quoteSchema.shape).map((k) => `quote.${k}`),
    ];
    assert.deepEqual([...documented].sort(), [...known].sort());
    assert.ok(rows.some((r) => r[0] === 'any other field'), 'unknown fields are documented');
  });

  it('the field table states the limits of the schema', () => {
    const rows = new Map(tableRows(section('### message_info fields')).slice(1).map((r) => [unquote(r[0]!), r.join(' | ')]));
    const fmt = (n: number): string => n.toLocaleString('en-US');
    for (const f of ['msg_id', 'to_user_id', 'quote.msg_id']) assert.match(rows.get(f)!, new RegExp(`1\\.\\.${LIMITS.idMax} characters`), f);
    for (const f of ['group_id', 'from_user_id']) assert.match(rows.get(f)!, new RegExp(`0\\.\\.${LIMITS.idMax} characters`), f);
    assert.match(rows.get('content')!, new RegExp(`at most ${fmt(LIMITS.contentMaxChars)} characters`));
    assert.match(rows.get('files_info')!, new RegExp(`at most ${LIMITS.filesMax} file`));
    assert.match(rows.get('files_info[].content')!, new RegExp(`at most ${LIMITS.fileDecodedMaxBytes / 1024 / 1024} MiB`));
    assert.match(rows.get('at_list')!, new RegExp(`at most ${LIMITS.atListMax} strings, each 1\\.\\.${LIMITS.idMax}`));
    assert.match(rows.get('send_url')!, new RegExp(`at most ${fmt(LIMITS.sendUrlMax)} characters`));
    assert.match(rows.get('create_timestamp')!, new RegExp(`0\\.\\.10\\^${Math.log10(LIMITS.createTimestampMax)}`));
    for (const f of DISPLAY_NAMES) assert.equal(rows.get(f)!.split(' | ')[1], `string, at most ${LIMITS.displayNameMaxChars} characters`, f);
    assert.match(DOC, new RegExp(`nested at most ${MAX_DEPTH} levels`));
  });

  it('documents every error code the server can answer, with its status, and no other', () => {
    const rows = tableRows(section('## 6. Errors')).slice(1);
    const documented = Object.fromEntries(rows.map((r) => [unquote(r[1]!), Number(r[0])]));
    const actual = Object.fromEntries(Object.entries(PROBLEM_CODES).map(([code, p]) => [code, p.status]));
    assert.deepEqual(documented, actual);
    for (const row of rows) assert.ok(row[2] && row[3], `${row[1]}: says when, and what to do`);
  });

  it('documents every auto_dialog reply reason', () => {
    const rows = tableRows(section('## 7. When auto_dialog answers')).slice(1);
    const reasons = rows.map((r) => unquote(r[0]!)).filter((r) => (REPLY_REASONS as readonly string[]).includes(r));
    assert.deepEqual([...reasons].sort(), [...REPLY_REASONS].sort());
  });

  it('section 10 gives every flag of send and receive, as their --help does', () => {
    const s10 = section('## 10. Tools');
    for (const [command, usage] of [['send', SEND_USAGE], ['receive', RECEIVE_USAGE]] as const) {
      const flags = new Set([...usage.matchAll(/--[a-z][a-z-]+/g)].map((m) => m[0]));
      assert.ok(flags.size >= 6, command);
      for (const flag of flags) assert.ok(s10.includes(flag), `section 10 gives ${command} ${flag}`);
    }
    const usageLines = /\n {4}npm run cli -- send[\s\S]*?\n\n/.exec(s10)?.[0] ?? assert.fail('the usage lines');
    for (const flag of ['--secret-env NAME', '--secret-stdin', '--timestamp SECONDS']) assert.ok(usageLines.includes(flag), `the usage lines have ${flag}`);
  });

  it('gives the numbers the server uses', () => {
    const config = serverConfigSchema.parse({});
    const human = (ms: number): string =>
      ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
    const expect = [
      `After the first attempt: ${RETRY_SCHEDULE_MS.map(human).join(', ')}, each ±20 %`,
      `of up to ${RETRY_AFTER_MAX_MS / 3_600_000} hour`,
      `any \`2xx\` within ${ATTEMPT_TIMEOUT_MS / 1000} s`,
      `abs(server time − timestamp) <= ${config.timestampToleranceSeconds}`,
      `in the last ${config.replayWindowSeconds} s`,
      `${config.rateLimit.perSecond} requests/s, bursts of ${config.rateLimit.burst}`,
      `kept for ${config.idempotencyRetentionHours} hours`,
      `up to ${config.engineTimeoutMs / 1000} s (server setting \`engineTimeoutMs\`)`,
      `${config.bodyLimitBytes / 1024 / 1024} MiB (server setting \`bodyLimitBytes\`)`,
      `out of ${config.addressRateLimit.burst}, with ${config.addressRateLimit.perSecond} earned back per second`,
      `${config.intake.perAddressBytes / 1024 / 1024} MiB per address, ${config.intake.totalBytes / 1024 / 1024} MiB in all (server setting \`intake\`)`,
      `| open connections per address | ${config.intake.perAddressConnections} (server setting \`intake.perAddressConnections\`)`,
      `| object members and array elements in the body | ${DEFAULT_JSON_BOUNDS.maxItems.toLocaleString('en-US')} altogether (an empty object or array counts as one)`,
      `| a member name | ${DEFAULT_JSON_BOUNDS.maxNameBytes} bytes`,
      `| \`message_info\` nesting | ${DEFAULT_JSON_BOUNDS.maxDepth - 1} levels`,
      `at most ${LIMITS.unknownFieldsMaxBytes / 1024} KiB (${LIMITS.unknownFieldsMaxBytes.toLocaleString('en-US')} bytes of their compact JSON in UTF-8`,
      `At most ${MAX_AUTO_REPLIES_PER_MINUTE} automatic replies per conversation per minute`,
      `pauses automatic replies for ${DEFAULT_CLIENT_SETTINGS.pauseMinutes} minutes`,
      `more than ${DEFAULT_CLIENT_SETTINGS.staleMinutes} minutes in the past`,
      `arrived for ${DEFAULT_CLIENT_SETTINGS.quietSeconds} s, but never longer than ${DEFAULT_CLIENT_SETTINGS.quietMaxSeconds} s`,
      config.fallbackText,
    ];
    const flat = DOC.replace(/\s+/g, ' ');
    for (const text of expect) assert.ok(flat.includes(text), `the doc says: ${text}`);
  });
});

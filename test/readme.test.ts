import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { canonicalJson } from '../src/main/auth/canonical-json.ts';
import { startHarness, type Harness } from './helpers/harness.ts';

const ROOT = new URL('../', import.meta.url).pathname;
const execFileAsync = promisify(execFile);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function blocks(tag: string): string[] {
  const re = new RegExp('```[a-z]+ ' + tag + '\\n([\\s\\S]*?)```', 'g');
  return [...README.matchAll(re)].map((m) => m[1]!);
}

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
const secret = /computed with secret `([^`]+)`/.exec(README)![1]!;

function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

describe('README integration guide', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ clockStart: Date.now() });
    h.addClient('acme', {}, secret);
    h.admin.kb.add('How do I reset my password?', 'Settings > Security > Reset password.', 0);
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

  it('the Node example signs the vectors identically and its request is accepted', async () => {
    const file = join(ROOT, 'test', `.readme-node-${process.pid}.mjs`);
    writeFileSync(file, blocks('readme-node')[0]!);
    try {
      const { signRequest } = (await import(file)) as { signRequest: (c: string, s: string, i: unknown, t?: number) => Record<string, unknown> };
      for (const v of vectors) {
        assert.equal(signRequest(v.client, secret, JSON.parse(v.message_info), Number(v.timestamp))['signature'], v.signature);
      }
      const body = signRequest('acme', secret, { event_type: 'website_dialog', msg_id: 'readme-node', from_user_id: 'visitor-9', content: 'How do I reset my password?' });
      const res = await fetch(h.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 200);
      assert.match(JSON.stringify(await res.json()), /Reset password/);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('the Python example reproduces the vectors', { skip: has('python3') ? false : 'python3 is not installed' }, () => {
    const program = `${blocks('readme-python')[0]}
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
  });

  it('the curl + openssl example is accepted by a running server', { skip: has('curl') && has('openssl') ? false : 'curl or openssl is not installed' }, async () => {
    // Asynchronous: the server under test runs in this very process.
    const run = await execFileAsync('bash', ['-c', blocks('readme-curl')[0]!], {
      encoding: 'utf8',
      env: { ...process.env, SWITCHBOARD_URL: h.url, SWITCHBOARD_SECRET: secret },
    });
    const body = JSON.parse(run.stdout) as { event_type: string; reply: { content: string; handoff: boolean } };
    assert.equal(body.event_type, 'website_dialog');
    assert.equal(body.reply.handoff, false);
  });

  it('documents every error code the server can answer', async () => {
    const { PROBLEM_CODES } = await import('../src/shared/problem-codes.ts');
    for (const code of Object.keys(PROBLEM_CODES)) {
      assert.match(README, new RegExp('`' + code + '`'), code);
    }
  });
});

describe('README receiver example', () => {
  it('verifies signatures, acknowledges duplicates without handling them twice, and refuses forgeries', async () => {
    const file = join(ROOT, 'test', `.readme-receiver-${process.pid}.mjs`);
    writeFileSync(file, blocks('readme-receiver')[0]!);
    const { signBody } = await import('./helpers/sign.ts');
    try {
      const mod = (await import(file)) as {
        startReceiver: (o: { client: string; secret: string; port: number; onReply: (m: Record<string, unknown>) => void }) => Promise<import('node:http').Server>;
      };
      const handled: Array<Record<string, unknown>> = [];
      const server = await mod.startReceiver({ client: 'acme', secret, port: 0, onReply: (m) => handled.push(m) });
      const url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/`;
      const info = { msg_id: 'r_1', reply_to: ['m1'], content: 'hello', event_type: 'auto_dialog', from_user_type: 4, message_type: 1 };
      const body = JSON.stringify(signBody('acme', secret, info, Math.floor(Date.now() / 1000)));
      const post = (b: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'r_1' }, body: b });
      assert.equal((await post(body)).status, 200);
      assert.equal((await post(body)).status, 200);
      assert.equal(handled.length, 1, 'the duplicate was acknowledged but not handled again');
      assert.equal((await post(body.replace('hello', 'hacked'))).status, 401);
      server.close();
    } finally {
      rmSync(file, { force: true });
    }
  });
});

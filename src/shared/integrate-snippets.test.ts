import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { curlSnippet, nodeSnippet, pythonSnippet, SECRET_ENV, SEND_URL_PLACEHOLDER, senderRun, SENDER_EVENTS, SNIPPET_LANGUAGES, SNIPPET_NICKNAME, snippetFor, type SnippetInput } from './integrate-snippets.ts';

const ENDPOINT = 'http://127.0.0.1:8787/custom-im/chat-messages';
const SECRET = 'dGVzdC1zZWNyZXQtZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9u';
const NASTY_ID = `o'brien "x" $HOME 客户`;
const NASTY_CONTENT = `It's "quoted"\nwith a newline, $(rm -rf /) and \`ticks\` 😀`;

/** What bash makes of a line of single-quoted and double-quoted parts (no other expansions but the ones named). */
function bashWord(word: string, vars: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < word.length; ) {
    const c = word[i]!;
    if (c === "'") {
      const end = word.indexOf("'", i + 1);
      out += word.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const end = word.indexOf('"', i + 1);
      out += word.slice(i + 1, end).replace(/\$([A-Z_]+|\$)/g, (_, name: string) => vars[name]!);
      i = end + 1;
    } else if (c === '\\') {
      out += word[i + 1];
      i += 2;
    } else {
      throw new Error(`unquoted ${c} at ${i} in ${word}`);
    }
  }
  return out;
}

/** RFC 8785 for JSON of strings, arrays and objects (all these messages hold). */
const canonical = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;

const assignment = (snippet: string, name: string): string => {
  const line = snippet.split('\n').find((l) => l.startsWith(`${name}=`));
  assert.ok(line, `${name}= in\n${snippet}`);
  // A trailing comment is bash's, not the value's.
  return line.slice(name.length + 1).replace(/ {2}# .*$/, '');
};

const RECEIVER = 'http://127.0.0.1:9000/';

describe('integrate snippets', () => {
  it('fill in the endpoint and the client id, and the secret only when given', () => {
    const input: SnippetInput = { endpoint: ENDPOINT, clientId: 'acme', secret: SECRET };
    for (const language of SNIPPET_LANGUAGES) {
      const withSecret = snippetFor(language, input);
      assert.ok(withSecret.includes(ENDPOINT), `${language}: endpoint`);
      assert.ok(withSecret.includes('acme'), `${language}: client id`);
      assert.ok(withSecret.includes(SECRET), `${language}: secret`);
      const without = snippetFor(language, { ...input, secret: null });
      assert.ok(!without.includes(SECRET), `${language}: no secret`);
      assert.ok(without.includes(SECRET_ENV), `${language}: reads ${SECRET_ENV}`);
      assert.match(without, /website_dialog/);
    }
  });

  it('write values as literals of each language, whatever they hold', () => {
    const input: SnippetInput = { endpoint: ENDPOINT, clientId: NASTY_ID, secret: `se'cr"et`, content: NASTY_CONTENT };
    assert.ok(pythonSnippet(input).includes(`CLIENT = ${JSON.stringify(NASTY_ID)}\n`));
    assert.ok(pythonSnippet(input).includes(`"content": ${JSON.stringify(NASTY_CONTENT)},`));
    assert.ok(nodeSnippet(input).includes(`const CLIENT = ${JSON.stringify(NASTY_ID)};`));
    assert.ok(nodeSnippet(input).includes(`const SECRET = ${JSON.stringify(`se'cr"et`)};`));
    const curl = curlSnippet(input);
    assert.equal(bashWord(assignment(curl, 'CLIENT'), {}), NASTY_ID);
    assert.equal(bashWord(assignment(curl, 'SECRET'), {}), `se'cr"et`);
    assert.equal(bashWord(assignment(curl, 'ENDPOINT'), {}), ENDPOINT);
  });

  it('curl: INFO is the canonical form of the message it sends, and the body carries it as is', () => {
    for (const [clientId, content] of [['acme', undefined], [NASTY_ID, NASTY_CONTENT]] as const) {
      const curl = curlSnippet({ endpoint: ENDPOINT, clientId, secret: null, content });
      const info = bashWord(assignment(curl, 'INFO'), { TS: '1763715600', $: '42' });
      const parsed = JSON.parse(info) as Record<string, string>;
      assert.equal(info, canonical(parsed), 'keys sorted, no whitespace, JCS strings');
      assert.equal(parsed['event_type'], 'website_dialog');
      assert.equal(parsed['msg_id'], 'curl-1763715600-42');
      if (content) assert.equal(parsed['content'], content);
      const data = curl.split('\n').find((l) => l.trimStart().startsWith('--data-binary '))!.trim().slice('--data-binary '.length);
      const body = JSON.parse(bashWord(data, { SIG: 'ab12', TS: '1763715600', INFO: info })) as Record<string, unknown>;
      assert.deepEqual(body, { client: clientId, signature: 'ab12', timestamp: 1763715600, message_info: parsed });
      assert.match(curl, /SIG=\$\(printf '%s' "\$TS\.\$CLIENT\.\$INFO" \| openssl dgst -sha256 -hmac "\$SECRET" -r/);
    }
  });

  it('without a secret, each stops with a message naming the variable when it is unset', () => {
    assert.match(pythonSnippet({ endpoint: ENDPOINT, clientId: 'acme', secret: null }), /os\.environ\.get\("SWITCHBOARD_SECRET"\) or sys\.exit\("set SWITCHBOARD_SECRET/);
    assert.match(nodeSnippet({ endpoint: ENDPOINT, clientId: 'acme', secret: null }), /process\.env\.SWITCHBOARD_SECRET;\nif \(!SECRET\)/);
    assert.match(curlSnippet({ endpoint: ENDPOINT, clientId: 'acme', secret: null }), /SECRET="\$\{SWITCHBOARD_SECRET:\?set SWITCHBOARD_SECRET/);
  });

  it('auto_dialog: a 1:1 customer message (from_user_type 2) whose send_url is the client\'s default', () => {
    const input: SnippetInput = { endpoint: ENDPOINT, clientId: 'acme', secret: null, event: 'auto_dialog', sendUrl: RECEIVER, content: 'How do I reset my password?' };
    assert.match(pythonSnippet(input), /^SEND_URL = "http:\/\/127\.0\.0\.1:9000\/"  # the client's default send_url/m);
    assert.match(pythonSnippet(input), /"event_type": "auto_dialog",\n.*\n.*\n.*\n    "from_user_type": 2,.*\n    "content": "How do I reset my password\?",\n    "send_url": SEND_URL,\n\}/);
    assert.match(nodeSnippet(input), /^const SEND_URL = "http:\/\/127\.0\.0\.1:9000\/";/m);
    assert.match(nodeSnippet(input), /event_type: 'auto_dialog',\n.*\n.*\n.*\n  from_user_type: 2,.*\n  content: "How do I reset my password\?",\n  send_url: SEND_URL,\n\};/);
    for (const language of SNIPPET_LANGUAGES) {
      const code = snippetFor(language, input);
      assert.ok(!code.includes('CHANGE-ME'), `${language}: no placeholder when the client has a default`);
      assert.match(code.split('\n')[1]!, /reply itself is POSTed to SEND_URL/, `${language}: says where the answer goes`);
      assert.ok(code.includes(senderRun(language, 'auto_dialog').command), `${language}: how to run it`);
    }
    const curl = curlSnippet(input);
    assert.equal(bashWord(assignment(curl, 'SEND_URL'), {}), RECEIVER);
    const info = bashWord(assignment(curl, 'INFO'), { TS: '1763715600', $: '42', SEND_URL: RECEIVER });
    assert.equal(info, canonical(JSON.parse(info)), 'keys sorted, no whitespace');
    assert.deepEqual(JSON.parse(info), {
      content: 'How do I reset my password?', event_type: 'auto_dialog', from_user_id: 'integration-test', from_user_nickname: 'Integration test', from_user_type: 2, msg_id: 'curl-1763715600-42', send_url: RECEIVER,
    });
  });

  it('auto_dialog without a default send_url: a marked placeholder, and each snippet refuses to run until it is changed', () => {
    const input: SnippetInput = { endpoint: ENDPOINT, clientId: 'acme', secret: null, event: 'auto_dialog', sendUrl: null };
    assert.match(SEND_URL_PLACEHOLDER, /CHANGE-ME\.invalid/);
    const stop = /put your receiver's URL in SEND_URL first/;
    const python = pythonSnippet(input);
    assert.match(python, /^SEND_URL = "https:\/\/CHANGE-ME\.invalid\/switchboard-replies"  # CHANGE ME: your receiver's URL \(the client has no default send_url\)$/m);
    assert.match(python, /^if "CHANGE-ME" in SEND_URL:\n    sys\.exit\(.*\)$/m);
    assert.match(python, stop);
    const node = nodeSnippet(input);
    assert.match(node, /^if \(SEND_URL\.includes\("CHANGE-ME"\)\) \{\n  console\.error\(.*\);\n  process\.exit\(1\);\n\}$/m);
    assert.match(node, stop);
    const curl = curlSnippet(input);
    assert.equal(bashWord(assignment(curl, 'SEND_URL'), {}), SEND_URL_PLACEHOLDER);
    assert.match(curl, /^case "\$SEND_URL" in \*CHANGE-ME\*\) echo .* >&2; exit 1;; esac$/m);
    // The guard comes before anything is signed or sent.
    for (const [code, guard, sign] of [[python, 'if "CHANGE-ME"', 'signature ='], [node, 'if (SEND_URL', 'const signature'], [curl, 'case "$SEND_URL"', 'SIG=']] as const) {
      assert.ok(code.includes(guard) && code.indexOf(guard) < code.indexOf(sign), guard);
    }
  });

  it('every sample message names its sender (from_user_nickname), so what an integrator copies shows a name in the console', () => {
    assert.equal(SNIPPET_NICKNAME, 'Integration test');
    for (const event of SENDER_EVENTS) {
      const input: SnippetInput = { endpoint: ENDPOINT, clientId: 'acme', secret: null, event, sendUrl: RECEIVER };
      assert.match(pythonSnippet(input), /^ {4}"from_user_id": "integration-test",\n {4}"from_user_nickname": "Integration test",  # shown in the console instead of the id$/m, `python ${event}`);
      assert.match(nodeSnippet(input), /^ {2}from_user_id: "integration-test",\n {2}from_user_nickname: "Integration test", \/\/ shown in the console instead of the id$/m, `node ${event}`);
      const info = JSON.parse(bashWord(assignment(curlSnippet(input), 'INFO'), { TS: '1763715600', $: '42', SEND_URL: RECEIVER })) as Record<string, unknown>;
      assert.equal(info['from_user_nickname'], 'Integration test', `curl ${event}`);
    }
  });

  it('website_dialog stays as it was: no send_url, no from_user_type, saved as send.*', () => {
    for (const language of SNIPPET_LANGUAGES) {
      const code = snippetFor(language, { endpoint: ENDPOINT, clientId: 'acme', secret: null, sendUrl: RECEIVER });
      assert.ok(!/send_url|SEND_URL|from_user_type/.test(code), language);
      assert.equal(senderRun(language).file, `send.${{ python: 'py', node: 'mjs', curl: 'sh' }[language]}`);
      assert.equal(senderRun(language, 'auto_dialog').file, `send_im.${{ python: 'py', node: 'mjs', curl: 'sh' }[language]}`);
    }
  });
});

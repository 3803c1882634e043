import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { curlSnippet, nodeSnippet, pythonSnippet, SECRET_ENV, SNIPPET_LANGUAGES, snippetFor, type SnippetInput } from './integrate-snippets.ts';

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
      out += word.slice(i + 1, end).replace(/\$([A-Z]+|\$)/g, (_, name: string) => vars[name]!);
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
  return line.slice(name.length + 1);
};

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
});

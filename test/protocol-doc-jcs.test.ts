import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import canonicalize from 'canonicalize';
import { canonicalJson } from '../src/main/auth/canonical-json.ts';
import { startHarness, type Harness } from './helpers/harness.ts';
import { block, flat, has, section, tableRows } from './helpers/protocol-doc.ts';
import { runPython } from './helpers/python-program.ts';

/**
 * Section 3's "Python's json.dumps and JCS": every case it lists is run through both, so the
 * differences it names are real, and so is the agreement it promises for ordinary messages.
 */
const TEXT = section("### Python's `json.dumps` and JCS");
const code = (cell: string): string => /^`(.+)`$/.exec(cell)?.[1] ?? assert.fail(`a code cell: ${cell}`);

/** Each JSON text (one a line) as Python's json.dumps writes it, sorted and compact. */
function dumps(texts: string[]): string[] {
  const program = `import json, sys
for line in sys.stdin.read().split("\\n"):
    print(json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False))
`;
  return runPython(program, texts.join('\n')).replace(/\n$/, '').split('\n');
}

/** Each JSON text as the doc's own jcs() writes it (section 3, Python). */
function docJcs(texts: string[]): string[] {
  const program = `${block('readme-python')}
import sys
for line in sys.stdin.read().split("\\n"):
    print(jcs(json.loads(line)))
`;
  return runPython(program, texts.join('\n')).replace(/\n$/, '').split('\n');
}

describe("docs/protocol.md: where Python's json.dumps is JCS and where it is not", { skip: has('python3') ? false : 'python3 is not installed' }, () => {
  it('each case of the table: JCS (canonicalize, the server, the doc\'s jcs()) and json.dumps write what the table says, and differ', () => {
    const rows = tableRows(TEXT).slice(1);
    assert.ok(rows.length >= 10, `${rows.length} cases`);
    const inputs = rows.map((r) => code(r[0]!));
    const python = dumps(inputs);
    const ours = docJcs(inputs);
    rows.forEach((row, i) => {
      const [input, jcs, dumped] = [inputs[i]!, code(row[1]!), code(row[2]!)];
      assert.equal(canonicalize(JSON.parse(input)), jcs, `${input}: canonicalize`);
      assert.equal(canonicalJson(JSON.parse(input)), jcs, `${input}: Switchboard`);
      assert.equal(ours[i], jcs, `${input}: the doc's jcs()`);
      assert.equal(python[i], dumped, `${input}: json.dumps`);
      assert.notEqual(jcs, dumped, `${input}: a real difference`);
      assert.ok(row[3], `${input}: says why`);
    });
    const kinds = (text: string) => ['float', '2^53', 'UTF-16 code units'].filter((k) => text.includes(k));
    assert.deepEqual(kinds(rows.map((r) => r[3]).join(' ')), ['float', '2^53', 'UTF-16 code units'], 'floats, large integers and key order are covered');
  });

  it('the floats it says agree do agree', () => {
    const said = /Floats that both write alike do agree: ((?:`[^`]+`(?:, )?)+)\./.exec(flat(TEXT))?.[1] ?? assert.fail('the sentence');
    const floats = [...said.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    assert.ok(floats.length >= 4);
    assert.deepEqual(dumps(floats), floats.map((f) => canonicalize(JSON.parse(f))));
  });

  it('ordinary message_info (strings with every escape, integers up to 2^53, arrays, nested objects, emoji keys) and every request example of section 2: the same text', () => {
    const ordinary = {
      event_type: 'auto_dialog', msg_id: 'm-1', from_user_nickname: 'Nora 😀', from_user_type: 2, create_timestamp: 1763715650,
      content: 'a\u0001\u001f\b\f\n\r\t"\\/\u007f\u2028\u2029 é 发票 😀 ｚ',
      at_list: ['bot-acme', ''], flags: [true, false, null], big: [9007199254740992, -9007199254740992, 0, -1],
      extra: { z: { y: [1, { b: 'x', a: null }] }, é: 1, 中: 2, '😀': 3, 'a😀': 4, ab: 5, A: 6 },
    };
    const examples = [...section('### Examples').matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.stringify(JSON.parse(m[1]!)));
    assert.ok(examples.length >= 7, `${examples.length} examples`);
    const texts = [JSON.stringify(ordinary), ...examples];
    assert.deepEqual(dumps(texts), texts.map((t) => canonicalize(JSON.parse(t))));
    assert.ok(flat(TEXT).includes('every request example of section 2'));
  });

  describe('a lone surrogate', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness();
      h.addClient('acme');
    });
    after(() => h.stop());

    it('has no JCS form: canonicalize throws, UTF-8 refuses what json.dumps writes, and the server answers 400 validation_failed', async () => {
      assert.throws(() => canonicalize(JSON.parse('"\\ud800"')));
      const python = runPython(`import json
text = json.dumps(json.loads('"\\\\ud800"'), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
try:
    text.encode("utf-8")
    print("encoded")
except UnicodeEncodeError:
    print("UnicodeEncodeError")
`);
      assert.equal(python.trim(), 'UnicodeEncodeError');
      const body = `{"client":"acme","timestamp":${h.now()},"signature":"${'0'.repeat(64)}","message_info":{"event_type":"website_dialog","from_user_id":"v","content":"\\ud800"}}`;
      const r = await h.postRaw(body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.code, 'validation_failed');
      assert.ok(flat(TEXT).includes('`canonicalize` throws, `json.dumps` returns a string that `.encode("utf-8")` refuses (`UnicodeEncodeError`), and Switchboard answers such a request `400 validation_failed`'));
    });
  });
});

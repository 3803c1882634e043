import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, jsonDepth } from './canonical-json.ts';

// RFC 8785 section 3.2.2: the sample input and its canonical output.
test('RFC 8785 3.2.2 sample', () => {
  const input = `{
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
    "literals": [null, true, false]
  }`;
  const expected = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
  assert.equal(canonicalJson(JSON.parse(input)), expected);
});

// RFC 8785 section 3.2.3: property sorting by UTF-16 code units.
test('RFC 8785 3.2.3 property sorting', () => {
  const input = `{
    "\\u20ac": "Euro Sign",
    "\\r": "Carriage Return",
    "\\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\\ud83d\\ude00": "Emoji: Grinning Face",
    "\\u0080": "Control",
    "\\u00f6": "Latin Small Letter O With Diaeresis"
  }`;
  const expected =
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
  assert.equal(canonicalJson(JSON.parse(input)), expected);
});

// RFC 8785 Appendix B: IEEE 754 values and their serialization.
test('RFC 8785 Appendix B number serialization', () => {
  const cases: Array<[string, string]> = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  for (const [hex, expected] of cases) {
    const value = Buffer.from(hex, 'hex').readDoubleBE(0);
    assert.equal(canonicalJson(value), expected, hex);
  }
  assert.throws(() => canonicalJson(Buffer.from('7fffffffffffffff', 'hex').readDoubleBE(0)));
  assert.throws(() => canonicalJson(Infinity));
});

test('lone surrogates cannot be canonicalized', () => {
  assert.throws(() => canonicalJson(JSON.parse('{"a":"\\ud800"}')), /surrogate/i);
});

test('depth is measured without recursion', () => {
  assert.equal(jsonDepth({ a: [{ b: 1 }] }), 3);
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
  assert.ok(jsonDepth(deep) > 32);
});

test('agrees with the RFC author\'s implementation on every kind of value JSON.parse yields', async () => {
  const { default: canonicalize } = await import('canonicalize');
  const samples = [
    '{"b":[1,2.5,-0,1e21,1e-7,true,false,null],"a":{"é":"x","\\u20ac":"€","\\ud83d\\ude00":"😀","":""},"A":"line\\nbreak\\u0001\\"q\\""}',
    '[[],{},"",0,-1.5e300,123456789012345680000]',
    '{"message_info":{"content":"你好","at_list":["a","b"],"quote":{"msg_id":"m","message_type":1}}}',
  ];
  for (const json of samples) assert.equal(canonicalJson(JSON.parse(json)), canonicalize(JSON.parse(json)), json);
  assert.throws(() => canonicalJson(JSON.parse('[1e400]')), /Infinity/);
  assert.throws(() => canonicalJson(JSON.parse('{"\\udc00":1}')), /surrogate/i, 'a member name is checked too');
});

test('given the JSON text it was parsed from, the result is the same, with or without escapes in that text', () => {
  for (const json of ['{"b":"plain","a":["x",1,{"é":"ü"}]}', '{"b":"a\\"quote","a":"tab\\there","c":"\\u00e9"}', '{"z":"/","y":"\\/"}']) {
    const source = Buffer.from(json);
    assert.equal(canonicalJson(JSON.parse(json), { source }), canonicalJson(JSON.parse(json)), json);
  }
});

test('the fast path (no backslash in the JSON text) gives the RFC author\'s result on text of every script, keys in any order', async () => {
  const { default: canonicalize } = await import('canonicalize');
  let seed = 8785;
  const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const chars = ['a', 'Z', '0', ' ', '/', 'é', 'ß', '中', '文', '😀', '\u2028', '\u007f', '\ufeff', '[', '}', ':', ','];
  const text = (): string => Array.from({ length: Math.floor(next() * 8) }, () => chars[Math.floor(next() * chars.length)]!).join('');
  for (let i = 0; i < 300; i++) {
    const value = Object.fromEntries(Array.from({ length: 1 + Math.floor(next() * 6) }, () => [text(), next() < 0.5 ? text() : [text(), next() * 1e9, { [text()]: text() }]]));
    const source = Buffer.from(JSON.stringify(value));
    assert.equal(source.indexOf(0x5c), -1, 'no escapes in this text: the fast path is taken');
    assert.equal(canonicalJson(JSON.parse(source.toString()), { source }), canonicalize(value));
  }
});

test('in turns, a large message_info canonicalises as in one piece, pausing between members once its budget is spent', async () => {
  const { canonicalJsonInTurns } = await import('./canonical-json.ts');
  const value = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${(i * 7919) % 2000}`, i % 3 ? 'x'.repeat(i) : { n: i, s: 'a"b\\n' }]));
  const source = Buffer.from(JSON.stringify(value));
  let pauses = 0;
  const text = await canonicalJsonInTurns(value, { source }, async () => void pauses++, -1);
  assert.equal(text, canonicalJson(value, { source }));
  assert.equal(pauses, 2000, 'with no budget at all, a pause before every member');
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deliveryStatus, initials, maskUrl, refBeside, shortUrl, sourceUse, titleHover } from './console-display.ts';


const s = (id: number, score: number) => ({ id, score, question: `q${id}` });

describe('the knowledge-base entries a reply shows', () => {
  it('a handoff shows its entries as the closest ones, not used (the review saw 0 and 0.052 shown as sources)', () => {
    assert.deepEqual(sourceUse({ engine: 'kb', handoff: true, confidence: 0.052, sources: [s(1, 0.052), s(2, 0)] }), { kind: 'closest', sources: [s(1, 0.052), s(2, 0)] });
  });
  it('an answer of the built-in engine shows only the entry it answered with', () => {
    assert.deepEqual(sourceUse({ engine: 'kb', handoff: false, confidence: 0.9, sources: [s(3, 0.9), s(4, 0.4), s(5, 0.1)] }), { kind: 'used', sources: [s(3, 0.9)] });
  });
  it("an LLM engine's answer shows the entries it was given, as such", () => {
    assert.deepEqual(sourceUse({ engine: 'gpt', handoff: false, confidence: null, sources: [s(3, 0.9), s(4, 0.4)] }), { kind: 'grounding', sources: [s(3, 0.9), s(4, 0.4)] });
  });
  it('no entries, nothing shown', () => {
    assert.equal(sourceUse({ engine: 'kb', handoff: false, confidence: null, sources: [] }), null);
    assert.equal(sourceUse({ engine: 'kb' }), null);
  });
});


describe('the Deliveries view shows a send_url without its secrets', () => {
  it('masks every query value and keeps the names', () => {
    assert.equal(maskUrl('https://hooks.example.com/in?token=abc123secret&team=7'), 'https://hooks.example.com/in?token=…&team=…');
    assert.equal(maskUrl('https://user:pw@hooks.example.com/in#frag'), 'https://…@hooks.example.com/in#…');
    assert.equal(maskUrl('http://127.0.0.1:9/hook'), 'http://127.0.0.1:9/hook');
    assert.equal(maskUrl('not a url?token=abc'), 'not a url?token=…');
  });
  it('the short form keeps host, path and the names, never a value', () => {
    assert.equal(shortUrl('http://127.0.0.1:9/hook?token=abc123secret'), '127.0.0.1:9/hook?token=…');
    const long = shortUrl('http://127.0.0.1:9/a/very/long/path/to/the/receiver/hook?token=secret-token');
    assert.ok(long.length <= 48 && !long.includes('secret') && long.startsWith('127.0.0.1:9/a/very'), long);
  });
});

describe('a delivery error has a short status of its own', () => {
  it('the HTTP status, so 500 and 410 differ at a glance', () => {
    assert.deepEqual(deliveryStatus({ state: 'retrying', lastStatus: 500, lastError: 'HTTP 500' }), { http: 500 });
    assert.deepEqual(deliveryStatus({ state: 'dead', lastStatus: null, lastError: 'HTTP 410' }), { http: 410 });
  });
  it('or the kind of network error', () => {
    assert.deepEqual(deliveryStatus({ state: 'retrying', lastStatus: null, lastError: 'connect ECONNREFUSED 127.0.0.1:9' }), { kind: 'refused' });
    assert.deepEqual(deliveryStatus({ state: 'retrying', lastStatus: null, lastError: 'no answer within 10000 ms' }), { kind: 'timeout' });
    assert.deepEqual(deliveryStatus({ state: 'dead', lastStatus: null, lastError: 'getaddrinfo ENOTFOUND nowhere.invalid' }), { kind: 'dns' });
    assert.deepEqual(deliveryStatus({ state: 'dead', lastStatus: null, lastError: 'socket hang up' }), { kind: 'network' });
    assert.equal(deliveryStatus({ state: 'cancelled', lastStatus: null, lastError: 'auto-reply stopped by the console' }), null);
  });
});


describe('avatar initials', () => {
  it('are letters only: "Tom (staff)" is T, not "T("', () => {
    assert.equal(initials('Tom (staff)'), 'T');
    assert.equal(initials('Tom Lee (staff)'), 'TL');
    assert.equal(initials('"Kim"'), 'K');
    assert.equal(initials('(staff)'), 'S');
    assert.equal(initials('--'), '?');
  });
  it('as before for plain names', () => {
    assert.equal(initials('Alice Chen'), 'AC');
    assert.equal(initials('bob'), 'B');
    assert.equal(initials('王小明'), '王');
    assert.equal(initials('ann.lee@example.com'), 'AL');
    assert.equal(initials('cust-kim'), 'CK');
  });
  it('a wide (CJK) character fills the badge alone', () => {
    assert.equal(initials('Ops 夜班群'), 'O');
    assert.equal(initials('王 小明'), '王');
    assert.equal(initials('김 민준'), '김');
  });
});

describe('a conversation named as sent, its id beside the name', () => {
  const c = (over: Partial<Parameters<typeof refBeside>[0]>) => ({ peer: 'u:wx1', groupId: null, groupName: null, customerId: 'wx1', customerName: null, ...over });
  it('shows the id beside a name that was sent, and not beside a title that is the id', () => {
    assert.equal(refBeside(c({ customerName: 'Nora' })), 'wx1');
    assert.equal(titleHover(c({ customerName: 'Nora' })), 'Nora (wx1)');
    assert.equal(refBeside(c({})), null);
    assert.equal(titleHover(c({})), 'wx1');
    assert.equal(refBeside(c({ peer: 'g:R1', groupId: 'R1', groupName: 'Printer support' })), 'R1');
    assert.equal(refBeside(c({ peer: 'g:R1', groupId: 'R1' })), null, 'an unnamed group is titled "# R1" already');
  });
});

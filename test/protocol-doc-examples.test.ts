import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { flat, section } from './helpers/protocol-doc.ts';

/**
 * Section 2's request examples, sent as written: what the note beside them says about their fixed
 * msg_ids, and the display names of v1.2 they carry.
 */
const EXAMPLES = section('### Examples');
const examples = [...EXAMPLES.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
const DISPLAY_NAMES = ['from_user_nickname', 'to_user_nickname', 'group_name'] as const;

describe("docs/protocol.md: section 2's examples against a running server", () => {
  let h: Harness;
  before(async () => {
    // Shortly after the group example's create_timestamp, so it is not stale.
    h = await startHarness({ clockStart: 1763715660_000 });
    h.addClient('acme', { sendUrl: 'http://127.0.0.1:9/hook', boundAccount: 'bot-acme' });
  });
  after(() => h.stop());

  it('each is accepted as written, in order; the group mention is answered (the client is bound to bot-acme)', async () => {
    assert.ok(examples.length >= 8, `${examples.length} examples`);
    for (const info of examples) {
      const r = await h.post(info);
      assert.equal(r.status, 200, `${String(info['msg_id'])}: ${JSON.stringify(r.body)}`);
      if (info['group_id']) assert.deepEqual(r.body['reply'], { scheduled: true, reason: 'scheduled' }, String(info['msg_id']));
    }
  });

  it('with their fixed msg_ids: unchanged again is the first response replayed; edited and sent again is 409 msg_id_conflict; a fresh msg_id is accepted', async () => {
    const note = flat(EXAMPLES);
    for (const said of ['**These examples have fixed `msg_id`s.**', 'the answer is **`409 msg_id_conflict`**', 'give it a fresh `msg_id`']) {
      assert.ok(note.includes(said), `the note says: ${said}`);
    }
    const first = examples[0]!;
    const again = await h.post(first, { timestamp: h.now() + 1 });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const edited = { ...first, content: 'How do I reset my PIN?' };
    const conflict = await h.post(edited);
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, 'msg_id_conflict');
    const renamed = await h.post({ ...examples.find((e) => e['from_user_nickname'] === 'Nora')!, from_user_nickname: 'Nora B.' });
    assert.equal(renamed.body.code, 'msg_id_conflict', 'a changed name is a change too');
    const fresh = await h.post({ ...edited, msg_id: mid('doc-fresh') });
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
  });

  it('the display names: the examples carry all three, and the doc gives their limit, aliases and what they name', () => {
    for (const field of DISPLAY_NAMES) assert.ok(examples.some((e) => typeof e[field] === 'string'), `an example with ${field}`);
    const staff = examples.find((e) => e['to_user_nickname'])!;
    assert.equal(staff['from_user_type'], 3, 'to_user_nickname names the customer staff writes to');
    const names = flat(section('### Display names'));
    for (const said of ['at most 200 characters each', '`400 validation_failed` naming the field', '`nickname`, `nick_name` or `from_user_name`', 'The latest value sent wins', 'The id stays one hover away']) {
      assert.ok(names.includes(said), `Display names says: ${said}`);
    }
  });

  it('a display name of 200 characters is accepted; 201 is 400 validation_failed naming the field', async () => {
    for (const field of DISPLAY_NAMES) {
      const base = { event_type: 'auto_dialog', from_user_id: 'cust-names', from_user_type: 2, group_id: 'g-names', content: 'hi' };
      const ok = await h.post({ ...base, msg_id: mid('names'), [field]: 'n'.repeat(200) });
      assert.equal(ok.status, 200, `${field}: ${JSON.stringify(ok.body)}`);
      const long = await h.post({ ...base, msg_id: mid('names'), [field]: 'n'.repeat(201) });
      assert.equal(long.status, 400, field);
      assert.equal(long.body.code, 'validation_failed', field);
      assert.deepEqual(long.body.errors?.map((e) => e.path), [`message_info.${field}`], field);
    }
  });
});

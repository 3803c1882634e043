import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './helpers/harness.ts';
import { startReceiver, eventually, type Receiver } from './helpers/receiver.ts';
import { scriptedEngine } from './helpers/engines.ts';
import type { ConsoleEvent, ConversationSummary, TranscriptEntry } from '../src/shared/console-api.ts';
import { conversationTitle } from '../src/shared/console-display.ts';

type Alert = Extract<ConsoleEvent, { type: 'alert' }>;

/**
 * Protocol v1.2's display names, sent as the service description spells them: the console and the
 * engines name people and groups by them, and keep the ids within reach.
 */
describe('display names: from_user_nickname, to_user_nickname and group_name', () => {
  let h: Harness;
  let rx: Receiver;
  const scripted = scriptedEngine();
  const events: ConsoleEvent[] = [];
  const api = () => h.service.console.asOwner;
  const group = { event_type: 'auto_dialog', group_id: 'R:1069605174', from_user_type: 2 };

  const conversation = async (id: string): Promise<ConversationSummary> => (await api().getTranscript({ conversationId: id, limit: 50 })).conversation;
  const entries = async (id: string): Promise<TranscriptEntry[]> => (await api().getTranscript({ conversationId: id, limit: 50 })).entries;
  const search = async (text: string): Promise<string[]> => (await api().listConversations({ view: 'all', search: text, limit: 50 })).items.map((c) => c.id);

  before(async () => {
    rx = await startReceiver();
    h = await startHarness({ engine: scripted.engine, config: { engineWorker: false } });
    h.addClient('acme', { sendUrl: rx.url, boundAccount: 'acme-bot', groupPolicy: 'all' } as never);
    h.service.console.events.subscribe((e) => events.push(e));
    await api().setOperator({ id: 'ann', name: 'Ann' });
  });
  after(async () => {
    await h.stop();
    await rx.close();
  });

  it('a group is titled by its group_name and its members by their nicknames, in the list, the transcript and search', async () => {
    const r = await h.post({ ...group, msg_id: mid(), group_name: 'Printer support', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora', content: 'the printer on floor 3 jams' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const id = String(r.body['conversation_id']);
    const c = await conversation(id);
    assert.deepEqual({ groupName: c.groupName, groupId: c.groupId }, { groupName: 'Printer support', groupId: 'R:1069605174' });
    assert.equal(conversationTitle(c), 'Printer support');
    const line = (await entries(id)).find((e) => e.kind === 'message')!;
    assert.deepEqual({ speaker: line.speaker, speakerName: line.speakerName }, { speaker: 'wxid_8g2k', speakerName: 'Nora' });
    assert.ok((await search('printer sup')).includes(id), 'found by the group name');
    assert.ok((await search('1069605174')).includes(id), 'still found by the group id');
    // A group has members, not a customer: neither the first member's id nor the latest one's name finds it as a field.
    assert.equal(c.customerName, null);
    assert.ok(!(await search('wxid_8g2k')).includes(id));
  });

  it('the latest name sent wins, on earlier lines too, and a line sent without one shows it; a message without the field renames nobody', async () => {
    const first = await h.post({ ...group, msg_id: mid(), group_name: 'Printer support', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora', content: 'still jammed' });
    const id = String(first.body['conversation_id']);
    await h.post({ ...group, msg_id: mid(), group_name: 'Printers (EMEA)', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora B.', content: 'any news?' });
    // No names at all: the stored ones stay.
    await h.post({ ...group, msg_id: mid(), from_user_id: 'wxid_8g2k', content: 'hello?' });
    const c = await conversation(id);
    assert.equal(c.groupName, 'Printers (EMEA)');
    assert.deepEqual(c.lastSpeaker, { role: 'customer', id: 'wxid_8g2k', name: 'Nora B.' }, 'the list names who spoke last in a group');
    const names = (await entries(id)).filter((e) => e.kind === 'message').map((e) => e.speakerName);
    assert.ok(names.length >= 4 && names.every((n) => n === 'Nora B.'), JSON.stringify(names));
  });

  it('to_user_nickname names the customer when staff write to them; a customer naming the account they write to does not rename the conversation', async () => {
    const staff = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'acme-bot', from_user_type: 1, to_user_id: 'cust-ben', to_user_nickname: 'Ben Okafor', content: 'Hi Ben, your refund is on its way' });
    const id = String(staff.body['conversation_id']);
    assert.equal((await conversation(id)).customerName, 'Ben Okafor');
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-ben', from_user_type: 2, to_user_id: 'acme-bot', to_user_nickname: 'Acme Support', content: 'thanks!' });
    const c = await conversation(id);
    assert.equal(c.customerName, 'Ben Okafor');
    assert.equal(conversationTitle(c), 'Ben Okafor');
    // The customer's own line carries no name: it shows the one staff gave.
    const mine = (await entries(id)).find((e) => e.kind === 'message' && e.speaker === 'cust-ben');
    assert.equal(mine?.speakerName, 'Ben Okafor');
    assert.equal(h.admin.people.names('acme', ['acme-bot']).get('acme-bot'), 'Acme Support');
  });

  it('a group message shows whom it @-mentions by name (the latest sent for that id), an unnamed id as itself', async () => {
    // Another group: the bound account speaking pauses the bot where it speaks.
    const lobby = { ...group, group_id: 'R:lobby' };
    await h.post({ ...lobby, msg_id: mid(), from_user_id: 'acme-bot', from_user_type: 1, from_user_nickname: 'Acme Support', content: 'hello all' });
    const r = await h.post({ ...lobby, msg_id: mid(), from_user_id: 'wxid_8g2k', at_list: ['acme-bot', 'wxid_nobody'], content: '@Acme Support can you help?' });
    const line = (await entries(String(r.body['conversation_id']))).find((e) => e.msgId === r.body['msg_id']);
    assert.deepEqual(line?.mentions, [
      { id: 'acme-bot', name: 'Acme Support' },
      { id: 'wxid_nobody', name: null },
    ]);
  });

  it('the aliases of older integrations still name a sender, after from_user_nickname', async () => {
    const a = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v-alias', nick_name: 'Old Style', content: 'hi' });
    assert.equal((await conversation(String(a.body['conversation_id']))).customerName, 'Old Style');
    const b = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: 'v-both', nickname: 'Alias', from_user_nickname: 'Described', content: 'hi' });
    assert.equal((await conversation(String(b.body['conversation_id']))).customerName, 'Described');
  });

  it('a name that is not a string, or longer than 200 characters, is a clear 400 and stores nothing', async () => {
    for (const [field, value, message] of [
      ['from_user_nickname', 42, /string/],
      ['group_name', 'g'.repeat(201), /at most 200 characters/],
      // 200 code points of a character outside the BMP (400 UTF-16 units) are still 200 characters.
    ] as const) {
      const r = await h.post({ ...group, msg_id: mid(), from_user_id: 'wxid_bad', content: 'x', [field]: value });
      assert.equal(r.status, 400, field);
      assert.equal(r.body.code, 'validation_failed');
      const error = r.body.errors?.find((e) => e.path === `message_info.${field}`);
      assert.match(error?.message ?? '', message, field);
    }
    const wide = await h.post({ ...group, msg_id: mid(), from_user_id: 'wxid_emoji', content: 'x', from_user_nickname: '😀'.repeat(200) });
    assert.equal(wide.status, 200, '200 emoji are 200 characters');
    assert.equal(h.admin.people.names('acme', ['wxid_bad']).size, 0);
  });

  it('a quote that names only a msg_id shows the quoted message from the store, with who said it', async () => {
    const original = mid('orig');
    await h.post({ ...group, msg_id: original, group_name: 'Printer support', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora B.', content: 'Is the printer on floor 3 broken?' });
    const r = await h.post({ ...group, msg_id: mid(), from_user_id: 'wxid_sam', from_user_nickname: 'Sam', message_type: 2, quote: { msg_id: original, message_type: 1 }, content: 'same question here' });
    const id = String(r.body['conversation_id']);
    const quoting = (await entries(id)).find((e) => e.msgId === r.body['msg_id']);
    assert.deepEqual(quoting?.quoted && { content: quoting.quoted.content, speakerName: quoting.quoted.speakerName }, { content: 'Is the printer on floor 3 broken?', speakerName: 'Nora B.' });
    const unknown = await h.post({ ...group, msg_id: mid(), from_user_id: 'wxid_sam', message_type: 2, quote: { msg_id: 'never-seen', message_type: 1 }, content: 'and this?' });
    assert.equal((await entries(id)).find((e) => e.msgId === unknown.body['msg_id'])?.quoted, null, 'a quote Switchboard never saw stays unresolved');
  });

  it('alerts, deliveries and the request log name the conversation, with its id', async () => {
    scripted.answer(() => ({ content: 'A human will help you.', handoff: true, confidence: null, sources: [] }));
    const seen = events.length;
    const r = await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'wxid_zoe', from_user_type: 2, from_user_nickname: 'Zoë', content: 'I need a person' });
    const id = String(r.body['conversation_id']);
    h.clock.advance(5000);
    const alert = await eventually(() => events.slice(seen).find((e): e is Alert => e.type === 'alert' && e.conversationId === id), 'the handoff alert');
    assert.equal(alert.who?.customerName, 'Zoë');
    assert.match(alert.text, /Zoë \(wxid_zoe\)/);

    scripted.answer((q) => ({ content: `answer to: ${q.context.at(-1)?.content ?? ''}`, handoff: false, confidence: 1, sources: [] }));
    rx.respond = () => ({ status: 500 });
    const g = await h.post({ ...group, msg_id: mid(), group_name: 'Printer support', from_user_id: 'wxid_8g2k', from_user_nickname: 'Nora B.', content: 'please answer' });
    h.clock.advance(5000);
    // The group has other members' replies failing too: this is the delivery of the reply to Nora's message.
    const gid = String(g.body['conversation_id']);
    const failing = async () => {
      const answered = (await entries(gid)).find((e) => e.msgId === g.body['msg_id'])?.decision?.delivery?.id;
      return answered !== undefined && (await api().listDeliveries({ states: ['retrying', 'dead'], limit: 50 })).find((d) => d.id === answered);
    };
    const delivery = await eventually(failing, 'the failing delivery of the reply to Nora');
    assert.equal(delivery.conversation && conversationTitle(delivery.conversation), 'Printer support', 'the name this message sent, the latest');
    assert.equal(delivery.conversation?.groupId, 'R:1069605174');
    assert.deepEqual(delivery.to, { id: 'wxid_8g2k', name: 'Nora B.' }, 'the member the reply answers');
    const reply = (await entries(gid)).find((e) => e.kind === 'reply' && e.delivery?.id === delivery.id);
    assert.deepEqual(reply?.mentions, [{ id: 'wxid_8g2k', name: 'Nora B.' }], 'the group reply @-mentions her, by name');
    rx.respond = () => ({ status: 200 });

    const log = await api().listRequests({ onlyFailed: false, limit: 200 });
    const row = log.find((l) => l.conversationId === id);
    assert.equal(row?.conversation?.customerName, 'Zoë');
  });

  it('the engine reads people by name, and what a quote quoted', async () => {
    const original = mid('orig');
    await h.post({ event_type: 'auto_dialog', msg_id: original, from_user_id: 'wxid_mia', from_user_type: 2, from_user_nickname: 'Mia', content: 'Do you deliver on Sundays?' });
    const before = scripted.calls.length;
    const r = await h.post({ event_type: 'assist_dialog', msg_id: original, from_user_id: 'wxid_mia', content: 'Do you deliver on Sundays?' });
    assert.equal(r.status, 200);
    const context = scripted.calls.slice(before).at(-1)!.context;
    assert.deepEqual(context.map((l) => [l.speaker, l.speakerName ?? null]).at(-1), ['Mia', 'Mia']);
    await h.post({ event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'wxid_mia', from_user_type: 2, message_type: 2, quote: { msg_id: original, message_type: 1 }, content: 'so, yes?' });
    h.clock.advance(5000);
    const asked = await eventually(() => scripted.calls.slice(before).find((c) => c.context.at(-1)?.content === 'so, yes?'), 'the auto reply asked');
    assert.deepEqual(asked.context.at(-1)?.quoted, { speaker: 'Mia', content: 'Do you deliver on Sundays?' });
  });
});

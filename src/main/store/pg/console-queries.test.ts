import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason } from '../../../../test/helpers/postgres.ts';
import type { ConversationFilter } from '../console-list.ts';
import { decodeCursor } from '../../../shared/list-cursor.ts';
import { pgConsoleQueries } from './console-queries.ts';
import { storePairs, type StorePair } from './store-pair.fixture.ts';
import type { PgQueryable } from './pool.ts';

// Ids chosen so byte order (SQLite's) differs from a natural-language collation's: '-' < 'A' < 'a' (English puts a before A).
const SEED = `
  INSERT INTO clients (id, created_at, updated_at) VALUES ('shop', 1, 1), ('other', 1, 1);
  INSERT INTO agents (id, name, role, created_at, updated_at) VALUES ('a1', 'Ann', 'agent', 0, 0), ('a2', 'Bob', 'agent', 0, 0);
  INSERT INTO kb_entries (id, question, answer, created_at, updated_at) VALUES (1, 'How do refunds work?', 'Within 7 days.', 1, 1);
  INSERT INTO conversations (id, client_id, channel, peer, group_id, customer_id, customer_name, group_name, auto_reply, paused_until,
                             needs_human, needs_human_since, needs_human_reason, created_at, last_message_at, assignee, unread) VALUES
    ('cv_A', 'shop', 'im', 'u:1', NULL, 'cust_1', 'Nora', NULL, 'active', NULL, 0, NULL, NULL, 1, 100, NULL, 3),
    ('cv_a', 'shop', 'im', 'u:2', NULL, 'cust_2', 'Émile', NULL, 'paused', 5000, 0, NULL, NULL, 1, 100, 'a1', 0),
    ('cv_-x', 'shop', 'web', 'w:1', NULL, 'x%y', 'A_B', NULL, 'paused', 500, 0, NULL, NULL, 1, 100, NULL, 0),
    ('cv_C', 'shop', 'im', 'g:1', 'grp_100%', 'cust_9', 'Zed', '退款群', 'active', NULL, 1, 50, 'handoff', 1, 90, 'a1', 1),
    ('cv_d', 'shop', 'web', 'w:2', NULL, 'cust_4', NULL, NULL, 'stopped', NULL, 1, 40, 'no_answer', 1, 80, NULL, 0),
    ('cv_e', 'other', 'im', 'u:5', NULL, 'cust_5', NULL, NULL, 'active', NULL, 1, 40, 'flagged', 1, 70, 'a2', 0),
    ('cv_f', 'other', 'im', 'u:6', NULL, 'cust_6', NULL, NULL, 'active', NULL, 1, NULL, NULL, 1, 60, NULL, 0);
  INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES ('shop', 'cust_1', 'Nora N.', 1), ('shop', 'cust_2', '小明', 1);
  INSERT INTO messages (id, conversation_id, client_id, event_type, msg_id, role, from_user_id, content, message_info, received_at,
                        reply_scheduled, reply_reason, reply_outcome, reply_msg_id, reply_note, shown) VALUES
    (1, 'cv_A', 'shop', 'auto_dialog', 'm1', 'customer', 'cust_1', 'Refund please, order 100%_off', '{"nickname":"Nora","at_list":["cust_2","nobody"]}', 10, 1, 'scheduled', 'answered', 'r1', NULL, NULL),
    (2, 'cv_A', 'shop', 'auto_dialog', 'm2', 'customer', 'cust_1', '我想申请退款', '{"message_type":2,"quote":{"msg_id":"m1","content":"Refund?"},"files_info":[{"file_name":"a.png","file_type":1}]}', 20, 1, 'scheduled', 'answered', 'r2', NULL, NULL),
    (3, 'cv_a', 'shop', 'auto_dialog', 'm3', 'customer', 'cust_2', 'CAFÉ au lait', 'not json', 30, NULL, NULL, NULL, NULL, NULL, NULL),
    (4, 'cv_a', 'shop', 'auto_dialog', 'm4', 'customer', 'cust_2', 'refund my coffee', '{}', 31, 0, 'not_mentioned', NULL, NULL, 'quiet', NULL),
    (5, 'cv_C', 'shop', 'auto_dialog', 'm5', 'customer', 'u7', '退款 where is my REFUND', '{"nickname":"  Lee  "}', 40, NULL, NULL, NULL, NULL, NULL, NULL),
    (6, 'cv_d', 'shop', 'website_dialog', 'm6', 'customer', NULL, 'ab', '{}', 50, NULL, NULL, NULL, NULL, NULL, NULL),
    (7, 'cv_-x', 'shop', 'auto_dialog', 'm7', 'command', NULL, 'stop_auto_reply', '{"source":"console","operator":{"id":"a1","name":"Ann"},"note":"flagged it"}', 60, NULL, NULL, NULL, NULL, NULL, NULL),
    (8, 'cv_e', 'other', 'auto_dialog', 'm8', 'customer', 'cust_5', 'refund again, café', '{}', 70, NULL, NULL, NULL, NULL, NULL, NULL),
    (9, 'cv_A', 'shop', 'auto_dialog', 'm9', 'staff', 'a1', NULL, '{}', 80, NULL, NULL, NULL, NULL, NULL, NULL);
  INSERT INTO replies (id, conversation_id, kind, msg_id, reply_to, after_message_id, content, handoff, engine, confidence, sources, created_at, cause, operator, instruction) VALUES
    (1, 'cv_A', 'auto', 'r1', '["m1"]', 1, 'We refund within 7 days.', 0, 'kb', 0.9, '[{"id":1,"score":0.9},{"id":7,"score":0.5}]', 11, NULL, NULL, NULL),
    (2, 'cv_A', 'auto', 'r2', '["m2"]', 2, 'On it.', 1, 'kb', NULL, '[]', 21, 'fallback', NULL, NULL),
    (3, 'cv_a', 'operator', 'r3', '[]', 4, 'Sent by Ann', 0, 'operator', NULL, '[]', 32, NULL, '{"id":"a1","name":"Ann"}', NULL),
    (4, 'cv_A', 'suggestion', 'r4', '[]', 2, 'maybe this', 0, 'kb', NULL, '[]', 22, NULL, NULL, 'be kind');
  INSERT INTO deliveries (id, reply_id, reply_msg_id, conversation_id, client_id, send_url, message_info, state, attempts, next_attempt_at, last_error, created_at, updated_at) VALUES
    (1, 1, 'r1', 'cv_A', 'shop', 'http://x/hook', '{"at_list":["cust_1"]}', 'dead', 3, 0, 'boom', 11, 12),
    (2, 1, 'r1', 'cv_A', 'shop', 'http://x/hook', '{}', 'pending', 1, 900, 'retry', 13, 13),
    (3, 2, 'r2', 'cv_A', 'shop', 'http://x/hook', '{"at_list":[]}', 'pending', 0, 950, NULL, 21, 21);
  INSERT INTO notes (id, conversation_id, msg_id, after_message_id, after_reply_id, author, content, mentions, created_at) VALUES
    (1, 'cv_A', 'n1', 1, 1, '{"id":"a1","name":"Ann"}', 'call her @Bob', '["a2","ghost","a2"]', 15);
  INSERT INTO read_markers (agent_id, conversation_id, last_read_message_id) VALUES ('a1', 'cv_A', 1);
`;

const pgKbQuestions = (db: PgQueryable) => async (ids: readonly number[]) =>
  new Map((await db.query('SELECT id, question FROM kb_entries WHERE id = ANY ($1::bigint[])', [[...new Set(ids)]])).rows.map((r: { id: number; question: string }) => [r.id, r.question]));

const reader = { id: 'a1', floor: 0 };

describe('the console reads on PostgreSQL give what SQLite gives', { skip: postgresSkipReason() }, () => {
  // Every test here only reads: one pair, seeded once, for the file.
  const pair = storePairs('console', { shared: true, icuCollation: 'en-US' });
  let opened: Promise<StorePair & { read: (s: 'sqlite' | 'pg') => ReturnType<typeof pgConsoleQueries> }> | undefined;
  const open = () =>
    (opened ??= (async () => {
      const p = await pair();
      await p.seed(SEED);
      const onPg = pgConsoleQueries(p.pg, pgKbQuestions(p.pg));
      return { ...p, read: (s: 'sqlite' | 'pg') => (s === 'sqlite' ? p.sqlite.console : onPg) };
    })());
  /** Every page of a list, following its cursors: the ids of each page and the cursors, equal on both stores. */
  const walk = async (p: Awaited<ReturnType<typeof open>>, f: Omit<ConversationFilter, 'now'>, label: string) => {
    const pages: string[][] = [];
    let cursor: string | null | undefined;
    do {
      const at = cursor === undefined ? undefined : decodeCursor(cursor!);
      const page = await p.same(`${label} page ${pages.length}`, (s) => p.read(s).conversations({ ...f, now: 1000, ...(at ? { cursor: at } : {}) }));
      pages.push(page.items.map((c) => c.id + ('matchText' in c && c.matchText !== undefined ? `:${c.matchText}` : '')));
      cursor = page.nextCursor;
    } while (cursor !== null && pages.length < 20);
    return pages;
  };

  it('lists by latest activity in byte order of ids, pages by cursor, and filters by client, channel, state and assignment', async () => {
    const p = await open();
    assert.deepEqual(await walk(p, { limit: 3 }, 'all'), [['cv_-x', 'cv_A', 'cv_a'], ['cv_C', 'cv_d', 'cv_e'], ['cv_f']]);
    assert.deepEqual(await walk(p, { limit: 50, clientId: 'other' }, 'client'), [['cv_e', 'cv_f']]);
    assert.deepEqual(await walk(p, { limit: 50, channel: 'web' }, 'channel'), [['cv_-x', 'cv_d']]);
    assert.deepEqual(await walk(p, { limit: 50, state: 'active' }, 'active'), [['cv_-x', 'cv_A', 'cv_C', 'cv_e', 'cv_f']]);
    assert.deepEqual(await walk(p, { limit: 50, state: 'paused' }, 'paused'), [['cv_a']]);
    assert.deepEqual(await walk(p, { limit: 50, state: 'stopped' }, 'stopped'), [['cv_d']]);
    assert.deepEqual(await walk(p, { limit: 50, state: 'needs_human' }, 'needs'), [['cv_C', 'cv_d', 'cv_e', 'cv_f']]);
    assert.deepEqual(await walk(p, { limit: 50, assignment: 'mine', reader }, 'mine'), [['cv_a', 'cv_C']]);
    assert.deepEqual(await walk(p, { limit: 50, assignment: 'mine' }, 'mine, no reader'), [[]]);
    assert.deepEqual(await walk(p, { limit: 50, assignment: 'unassigned' }, 'unassigned'), [['cv_-x', 'cv_A', 'cv_d', 'cv_f']]);
    const all = await p.same('summaries', (s) => p.read(s).conversations({ limit: 50, now: 1000, reader }));
    const byId = new Map(all.items.map((c) => [c.id, c]));
    assert.equal(byId.get('cv_A')!.unread, 1, "the reader's own count: one customer line after their marker");
    assert.deepEqual(byId.get('cv_A')!.lastReply, undefined, 'the last line (a staff message) came after the last reply');
    assert.deepEqual(byId.get('cv_a')!.lastReply, { by: 'operator', operator: 'Ann' });
    assert.deepEqual(byId.get('cv_-x')!.lastCommand, { command: 'stop_auto_reply', source: 'console', operator: 'Ann', note: 'flagged it' });
    assert.deepEqual(byId.get('cv_C')!.lastSpeaker, { role: 'customer', id: 'u7', name: null });
  });

  it("orders Needs you by the longest wait, a wait with no start first, the reader's queue without colleagues' conversations", async () => {
    const p = await open();
    assert.deepEqual(await walk(p, { limit: 2, view: 'needs_you' }, 'needs you'), [['cv_f', 'cv_d'], ['cv_e', 'cv_C']]);
    assert.deepEqual(await walk(p, { limit: 1, view: 'needs_you', reader }, 'needs you, a1'), [['cv_f'], ['cv_d'], ['cv_C']]);
    const page = await p.same('last customer line', (s) => p.read(s).conversations({ limit: 50, now: 1000, view: 'needs_you' }));
    assert.equal(page.items.find((c) => c.id === 'cv_C')!.lastCustomerText, '退款 where is my REFUND');
  });

  it('searches fields (ASCII case folded, LIKE wildcards literal) then messages newest first, Chinese and short text included', async () => {
    const p = await open();
    const search = (text: string, limit = 50) => walk(p, { limit, search: text }, `search ${text}`);
    assert.deepEqual(await search('refund'), [['cv_e:refund again, café', 'cv_C:退款 where is my REFUND', 'cv_a:refund my coffee', 'cv_A:Refund please, order 100%_off']]);
    assert.deepEqual(await search('refund', 1), [['cv_e:refund again, café'], ['cv_C:退款 where is my REFUND'], ['cv_a:refund my coffee'], ['cv_A:Refund please, order 100%_off']]);
    assert.deepEqual(await search('申请退款'), [['cv_A:我想申请退款']], 'four ideographs: the trigram path');
    assert.deepEqual(await search('退款'), [['cv_C', 'cv_A:我想申请退款']], "two: the group's name, then the recent-window path");
    assert.deepEqual(await search('CAFÉ'), [['cv_e:refund again, café']], 'SQLite folds ASCII only: É is not é');
    assert.deepEqual(await search('100%'), [['cv_C', 'cv_A:Refund please, order 100%_off']]);
    assert.deepEqual(await search('a_b'), [['cv_-x']]);
    assert.deepEqual(await search('x%'), [['cv_-x']]);
    assert.deepEqual(await search('nora'), [['cv_A']]);
    assert.deepEqual(await search('n_ra'), [[]], 'an underscore is itself, not any character');
    assert.deepEqual(await search('cust_9'), [[]], "a group's customer fields name only its first writer: not matched");
    assert.deepEqual(await search('zzz'), [[]]);
    assert.deepEqual(await walk(p, { limit: 50, search: 'refund', clientId: 'shop', reader }, 'search with filters'), [['cv_C:退款 where is my REFUND', 'cv_a:refund my coffee', 'cv_A:Refund please, order 100%_off']]);
  });

  it('reads one conversation, whether earlier lines exist, and transcripts with replies, notes, quotes, mentions and deliveries', async () => {
    const p = await open();
    const a = await p.same('conversation', (s) => p.read(s).conversation('cv_A'));
    assert.equal(a?.unread, 3, 'the shared counter without a reader');
    assert.equal((await p.same('conversation for a reader', (s) => p.read(s).conversation('cv_A', reader)))?.unread, 1);
    assert.equal(await p.same('unknown', (s) => p.read(s).conversation('nope')), undefined);
    assert.equal(await p.same('earlier', (s) => p.read(s).hasEarlier('cv_A', 2)), true);
    assert.equal(await p.same('none earlier', (s) => p.read(s).hasEarlier('cv_A', 1)), false);
    const t = await p.same('transcript', (s) => p.read(s).transcript('cv_A', 50));
    assert.deepEqual(t.map((e) => `${e.kind}:${e.id}`), ['message:1', 'reply:1', 'reply:1', 'note:1', 'message:2', 'reply:2', 'suggestion:4', 'message:9']);
    const m1 = t[0]!;
    assert.equal(m1.speakerName, 'Nora N.');
    assert.deepEqual(m1.mentions, [{ id: 'cust_2', name: '小明' }, { id: 'nobody', name: null }]);
    const m2 = t[4]!;
    assert.deepEqual(m2.quoted, { msgId: 'm1', role: 'customer', speaker: 'cust_1', speakerName: 'Nora N.', content: 'Refund please, order 100%_off' });
    assert.equal(t[1]!.sources?.[0]?.question, 'How do refunds work?');
    assert.deepEqual(t[3]!.mentions, [{ id: 'a2', name: 'Bob' }, { id: 'ghost', name: null }, { id: 'a2', name: 'Bob' }]);
    assert.deepEqual(t[5]!.delivery, { id: 3, state: 'pending', attempts: 0, lastError: null, nextAttemptAt: 950, behind: { id: 2, failing: true, nextAttemptAt: 900 } });
    const b = await p.same('transcript of a line that is not JSON', (s) => p.read(s).transcript('cv_a', 50));
    assert.deepEqual(b[0]!.messageInfo, {});
    const page = await p.same('an earlier page', (s) => p.read(s).transcript('cv_A', 1, 9));
    assert.deepEqual(page.map((e) => `${e.kind}:${e.id}`), ['message:2', 'reply:2', 'suggestion:4']);
    assert.deepEqual(await p.same('empty', (s) => p.read(s).transcript('nope', 10)), []);
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { postgresSkipReason, startPostgres, type PgServer } from '../../../../test/helpers/postgres.ts';
import { createTemplate, copyDatabase } from '../../../../test/helpers/pg-work-fixture.ts';
import { openPgPool } from '../pg/pool.ts';
import { pgReplyStore } from '../pg/reply-queries.ts';
import { inPgTransaction } from '../pg/transaction.ts';
import { int8 } from '../pg/leases/lease.ts';
import { createPgIngestRunner } from '../../conversations/pg-ingest-runner.ts';
import { CLIENT, request, T0 } from './ingest-conformance.ts';
import { replyConformance, type ReplyHarness } from './reply-conformance.ts';

const skip = postgresSkipReason();

describe('auto reply on PostgreSQL: the store and the ingest timer', { skip }, () => {
  let server: PgServer;
  let made = 0;
  before(async () => {
    server = await startPostgres();
    await createTemplate(server.url, 'reply_template');
  });
  after(() => server?.stop());

  async function open(): Promise<ReplyHarness> {
    const pool = openPgPool(await copyDatabase(server.url, 'reply_template', `reply_${++made}`), { max: 4 });
    await pool.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, $2, $2)', [CLIENT, T0]);
    const runner = createPgIngestRunner(pool);
    return {
      ingest: (command) => runner.run(command),
      store: pgReplyStore(pool),
      transaction: (work) => inPgTransaction(pool, (tx) => work(pgReplyStore(tx))),
      delivery: async (id) => {
        const d = (await pool.query('SELECT * FROM deliveries WHERE id = $1', [id])).rows[0] as Record<string, unknown> | undefined;
        return (
          d && {
            kind: d['kind'] as string,
            replyId: int8.parse(d['reply_id']),
            state: d['state'] as string,
            origin: d['origin'] as string,
            sendUrl: d['send_url'] as string,
            messageInfo: d['message_info'] as string,
            nextAttemptAt: int8.parse(d['next_attempt_at']),
            createdAt: int8.parse(d['created_at']),
            updatedAt: int8.parse(d['updated_at']),
          }
        );
      },
      trace: async (messageId) => {
        const r = (await pool.query('SELECT reply_outcome, reply_msg_id, reply_note FROM messages WHERE id = $1', [messageId])).rows[0] as
          | { reply_outcome: string | null; reply_msg_id: string | null; reply_note: string | null }
          | undefined;
        return r && { outcome: r.reply_outcome, replyMsgId: r.reply_msg_id, note: r.reply_note };
      },
      close: () => pool.end(),
    };
  }

  describe('auto reply store conformance: PostgreSQL', () => replyConformance(open));

  async function node() {
    const pool = openPgPool(await copyDatabase(server.url, 'reply_template', `timer_${++made}`), { max: 4 });
    await pool.query('INSERT INTO clients (id, created_at, updated_at) VALUES ($1, $2, $2)', [CLIENT, T0]);
    const timer = async (conversationId: string) =>
      (await pool.query<{ due_at: number; last_message_id: number }>('SELECT due_at, last_message_id FROM due_replies WHERE conversation_id = $1', [conversationId])).rows[0];
    return { pool, runner: createPgIngestRunner(pool), timer };
  }

  it('PostgreSQL ingest sets the reply timer in the transaction that stores the message: a quiet period after the newest pending message, capped from the oldest', async () => {
    const { pool, runner, timer } = await node();
    try {
      const settings = { quietSeconds: 2, quietMaxSeconds: 5 };
      const send = async (content: string, at: number) => {
        const o = await runner.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'u1', content }, at, settings) });
        return o?.kind === 'ok' ? o : assert.fail(JSON.stringify(o));
      };
      const first = await send('a', T0);
      const idOf = async (msgId: string) => int8.parse((await pool.query('SELECT id FROM messages WHERE msg_id = $1', [msgId])).rows[0]!.id);
      assert.deepEqual(await timer(first.conversationId), { due_at: T0 + 2_000, last_message_id: await idOf(first.msgId) });
      const second = await send('b', T0 + 1_500);
      assert.deepEqual(await timer(first.conversationId), { due_at: T0 + 3_500, last_message_id: await idOf(second.msgId) });
      const third = await send('c', T0 + 4_000);
      assert.deepEqual(await timer(first.conversationId), { due_at: T0 + 5_000, last_message_id: await idOf(third.msgId) }, 'capped 5 s after the first');
      const replayed = await runner.run({ kind: 'auto_dialog', request: { ...request({ event_type: 'auto_dialog', from_user_id: 'u1', content: 'a' }, T0 + 4_500, settings), info: { event_type: 'auto_dialog', from_user_id: 'u1', msg_id: first.msgId, from_user_type: 2, content: 'a' } } });
      assert.ok(replayed?.kind === 'ok' || replayed?.kind === 'conflict');
      assert.equal((await timer(first.conversationId))!.due_at, T0 + 5_000, 'a twin of an earlier message moves nothing');
      const staff = await runner.run({ kind: 'auto_dialog', request: request({ event_type: 'auto_dialog', from_user_id: 'shop-bot', to_user_id: 'u2', from_user_type: 1, content: 'hi' }, T0) });
      assert.equal(staff?.kind, 'ok');
      assert.equal(await timer((staff as { conversationId: string }).conversationId), undefined, 'no reply scheduled, no timer');
    } finally {
      await pool.end();
    }
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresSkipReason, startPostgres, type PgServer } from './helpers/postgres.ts';
import { addPgClient, createInstallationDatabase, post } from './helpers/pg-node.ts';
import { keyFileBox } from '../src/main/auth/secret-box.ts';
import { serverConfigSchema } from '../src/main/config/server-config.ts';
import { startPgService, type RunningPgService } from '../src/main/pg-service.ts';
import type { Engine } from '../src/main/engines/engine.ts';

const SECRET = 'pg-replay-order-secret-0123456789';

/**
 * Protocol section 3 orders the checks: a replayed signature (409) is refused before the rate
 * limit (429). On PostgreSQL the signature is claimed in the request's own transaction, after the
 * rate limit and, for a website or assist request, after the engine answered (issue 30). Here a
 * replay that reaches another node is still refused first, and a website replay costs no answer.
 */
describe('replay protection on PostgreSQL nodes, in the protocol\'s order', { skip: postgresSkipReason(), timeout: 60_000 }, () => {
  let server: PgServer;
  const nodes: RunningPgService[] = [];
  /** The website questions the engine was asked, on any node. */
  const asked: string[] = [];
  const engine: Engine = {
    name: 'counting',
    answer: async (request) => {
      if (request.channel === 'web') asked.push(request.context.at(-1)?.content ?? '');
      return { content: 'Here is an answer.', handoff: false, confidence: 1, sources: [] };
    },
  };

  before(async () => {
    server = await startPostgres();
    const storeUrl = await createInstallationDatabase(server.url);
    const keyFile = join(mkdtempSync(join(tmpdir(), 'sb-pg-replay-')), 'shared.key');
    const box = keyFileBox(keyFile);
    box.seal('make the key file');
    // Three requests per node, refilled once in 1,000 s: the bucket stays as the test leaves it.
    const config = serverConfigSchema.parse({ port: 0, host: '127.0.0.1', rateLimit: { perSecond: 0.001, burst: 3 } });
    for (const n of ['a', 'b']) nodes.push(await startPgService({ config, storeUrl, secretBox: box, nodeId: `node-${n}`, engine, log: () => {} }));
    await addPgClient(storeUrl, keyFile, 'shop', SECRET, { sendUrl: 'http://127.0.0.1:9/hook' });
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await server?.stop();
  });

  it('refuses a replay with 409 before the engine answers it and before the rate limit, on another node', async () => {
    const [a, b] = nodes as [RunningPgService, RunningPgService];
    const web = { event_type: 'website_dialog', from_user_id: 'visitor', content: 'Do you ship abroad?' };
    const im = { event_type: 'auto_dialog', from_user_id: 'staff-1', to_user_id: 'cust-1', from_user_type: 3, content: 'We do.', message_type: 1 };
    // No msg_id: the server names each one, so a second copy is a replay, never an idempotent retry.
    const webFirst = await post(a.endpointUrl, 'shop', SECRET, web);
    assert.equal(webFirst.status, 200, JSON.stringify(webFirst.json));
    const imFirst = await post(a.endpointUrl, 'shop', SECRET, im);
    assert.equal(imFirst.status, 200, JSON.stringify(imFirst.json));
    assert.deepEqual(asked, ['Do you ship abroad?']);

    const webAgain = await post(b.endpointUrl, 'shop', SECRET, {}, webFirst.sent);
    assert.equal(webAgain.status, 409, JSON.stringify(webAgain.json));
    assert.equal(webAgain.json['code'], 'replayed_request');
    assert.deepEqual(asked, ['Do you ship abroad?'], 'the replay never reached the engine');

    // Node B's three requests are spent; its next fresh one is over the limit.
    for (let i = 0; i < 3; i++) assert.equal((await post(b.endpointUrl, 'shop', SECRET, { ...im, content: `fill ${i}` })).status, 200);
    const fresh = await post(b.endpointUrl, 'shop', SECRET, { ...im, content: 'one too many' });
    assert.equal(fresh.status, 429);
    assert.equal(fresh.json['code'], 'rate_limited');

    const imAgain = await post(b.endpointUrl, 'shop', SECRET, {}, imFirst.sent);
    assert.equal(imAgain.status, 409, 'a replay is refused as one, over the rate limit or not');
    assert.equal(imAgain.json['code'], 'replayed_request');
  });
});

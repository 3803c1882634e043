import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { startHarness, type Harness } from './helpers/harness.ts';
import { eventually, startReceiver, verifyDelivery, type Receiver } from './helpers/receiver.ts';
import { renderOpenApi } from '../src/main/http/openapi/document.ts';
import { OPENAPI_PATH } from '../src/main/http/openapi/generate.ts';
import { EXAMPLE } from '../src/main/http/openapi/examples.ts';
import { PROBLEM_EXAMPLES } from '../src/main/http/openapi/problem-examples.ts';
import { deliveryBodySchema, deliverySchemas, PROBLEM_EXTENSIONS, problemSchema, successSchemas } from '../src/main/http/openapi/response-schemas.ts';
import { PROBLEM_CODES, type ProblemCode } from '../src/shared/problem-codes.ts';
import type { EventType } from '../src/shared/protocol/message-schema.ts';

type Json = Record<string, unknown>;
interface Example { summary: string; value: Json }

const committed = readFileSync(OPENAPI_PATH, 'utf8');
const doc = JSON.parse(committed) as {
  info: { version: string };
  paths: Record<string, Record<string, { requestBody: { content: Record<string, { examples: Record<string, Example> }> }; responses: Record<string, Json> }>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, Example> }> } } }>;
  components: { examples: Record<string, Example>; responses: Record<string, { content: Record<string, { examples: Record<string, { $ref: string }>; schema: Json }> }> };
};
const chat = doc.paths['/custom-im/chat-messages']!['post']!;
const requestExamples = chat.requestBody.content['application/json']!.examples;
const responseExamples = (chat.responses['200'] as { content: Record<string, { examples: Record<string, Example> }> }).content['application/json']!.examples;
const problemExample = (code: string): Json => doc.components.examples[`problem_${code}`]!.value;

describe('docs/openapi.json', () => {
  it('is what `npm run openapi` generates now', () => {
    assert.ok(renderOpenApi() === committed, 'docs/openapi.json is stale: run npm run openapi (and commit the result)');
  });

  it('is a valid OpenAPI 3.1 document for @readme/openapi-parser, which does refuse a broken one', async () => {
    const result = await validate(structuredClone(doc) as never);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
    assert.equal(doc.info.version, '1.1');
    const broken = structuredClone(doc) as unknown as Json & { paths: Json };
    (broken.paths['/custom-im/chat-messages'] as Json)['post'] = { ...chat, requestBody: { $ref: '#/components/requestBodies/Nope' } };
    assert.equal((await validate(broken as never)).valid, false);
  });

  it('has every problem code, each under its status, with an example and what to do', () => {
    const statusOf = (ref: unknown): string => String((ref as { $ref: string }).$ref).replace('#/components/responses/Problem', '');
    const inOperations = new Set(Object.values(chat.responses).filter((r) => '$ref' in r).map(statusOf));
    for (const [code, { status }] of Object.entries(PROBLEM_CODES)) {
      const example = doc.components.examples[`problem_${code}`];
      assert.ok(example, `no example for ${code}`);
      assert.equal(example.value['code'], code);
      assert.equal(example.value['status'], status);
      assert.ok((example as unknown as { description: string }).description.length > 20, `${code} says what to do`);
      const response = doc.components.responses[`Problem${status}`]!.content['application/problem+json']!;
      assert.deepEqual(response.examples[code], { $ref: `#/components/examples/problem_${code}` });
      assert.ok((response.schema['properties'] as { code: { enum: string[] } }).code.enum.includes(code));
      if (status !== 404 && status !== 405) assert.ok(inOperations.has(String(status)), `POST answers ${status}: ${code}`);
    }
  });

  it('tells the story of docs/protocol.md: a msg_id both use is the same sender\'s, and each reply answers its own customer', () => {
    const protocol = readFileSync(join(OPENAPI_PATH, '..', 'protocol.md'), 'utf8');
    const infos: Json[] = [];
    for (const [, text] of protocol.matchAll(/```json[^\n]*\n([\s\S]*?)```/g)) {
      const body = JSON.parse(text!) as Json;
      if (!('request_id' in body)) infos.push((body['message_info'] as Json | undefined) ?? body);
    }
    for (const [, text] of protocol.matchAll(/^message_info: +(\{.*\})$/gm)) infos.push(JSON.parse(text!) as Json);
    const isMessage = (i: Json): boolean => typeof i['msg_id'] === 'string' && (i['event_type'] === 'auto_dialog' || i['event_type'] === 'website_dialog') && !('reply_to' in i);
    const inDoc = new Map(infos.filter(isMessage).map((i) => [i['msg_id'] as string, i]));
    const inOpenApi = Object.values(requestExamples).map((e) => e.value['message_info'] as Json).filter(isMessage);
    const who = (i: Json) => ({ event_type: i['event_type'], group_id: i['group_id'], from_user_id: i['from_user_id'], to_user_id: i['to_user_id'] });
    let shared = 0;
    for (const info of inOpenApi) {
      const same = inDoc.get(info['msg_id'] as string);
      if (!same) continue;
      shared++;
      assert.deepEqual(who(info), who(same), `${String(info['msg_id'])}: the same message in docs/protocol.md and docs/openapi.json`);
    }
    assert.ok(shared >= 3, `${shared} msg_ids in both`);

    const messages = new Map([...inDoc, ...inOpenApi.map((i): [string, Json] => [i['msg_id'] as string, i])]);
    const deliveries = [
      ...Object.values(doc.webhooks['replyDelivery']!.post.requestBody.content['application/json']!.examples).map((e) => e.value['message_info'] as Json),
      ...infos.filter((i) => 'reply_to' in i),
    ];
    assert.ok(deliveries.length >= 5);
    for (const delivery of deliveries) {
      for (const id of delivery['reply_to'] as string[]) {
        const asked = messages.get(id);
        const what = `${String(delivery['msg_id'])} answers ${id}`;
        assert.ok(asked, `${what}: a message of the examples`);
        assert.ok(asked['from_user_type'] !== 3 && asked['from_user_type'] !== 4, `${what}: a customer's message`);
        assert.equal(asked['from_user_id'], delivery['to_user_id'], `${what}: from the customer it is addressed to`);
        assert.equal(asked['group_id'], delivery['group_id'], `${what}: in the same chat`);
      }
    }
  });

  it('the source refuses with no code that PROBLEM_CODES (and so the document) lacks', () => {
    const files = ['src/main/http', 'src/shared/protocol'].flatMap((dir) =>
      readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => join(dir, f)),
    );
    const found = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:new HttpProblem\(|\badd\(|code: )'([a-z_]+)'/g)) found.add(m[1]!);
    }
    assert.ok(found.size >= 15, `the scan finds the codes (${[...found].join(', ')})`);
    for (const code of found) assert.ok(doc.components.examples[`problem_${code}`], `${code} is answered but not documented`);
  });
});

describe('docs/openapi.json against a running server', () => {
  let h: Harness;
  let receiver: Receiver;
  before(async () => {
    // Every name resolves to loopback: the examples' hooks.example.com fails fast instead of waiting on DNS.
    h = await startHarness({ clockStart: EXAMPLE.timestamp * 1000, resolve: (_host, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]) });
    h.addClient(EXAMPLE.client, { boundAccount: EXAMPLE.boundAccount }, EXAMPLE.secret);
    h.addClient(EXAMPLE.disabledClient);
    h.admin.clients.setEnabled(EXAMPLE.disabledClient, false, h.clock.now());
    for (const { question, answer } of EXAMPLE.kb) h.admin.kb.add(question, answer, h.clock.now());
    receiver = await startReceiver('/hook', { now: () => h.clock.now() });
  });
  after(async () => {
    await h.stop();
    await receiver.close();
  });

  const send = (body: string | undefined, o: { method?: string; path?: string; headers?: Record<string, string>; requestId?: string } = {}) =>
    fetch(`${h.base}${o.path ?? '/custom-im/chat-messages'}`, {
      method: o.method ?? 'POST',
      headers: { ...(o.headers ?? { 'content-type': 'application/json' }), ...(o.requestId ? { 'x-request-id': o.requestId } : {}) },
      body,
    });

  /** Server-made ids differ from the examples': each example id must stand for one real id throughout. */
  const ids = new Map<string, string>();
  function sameUpToIds(actual: unknown, expected: unknown, path: string): void {
    if (typeof expected === 'string' && /^[crs]_[A-Za-z0-9_-]{16}$/.test(expected)) {
      assert.equal(typeof actual, 'string', path);
      assert.equal((actual as string).slice(0, 2), expected.slice(0, 2), path);
      const known = ids.get(expected);
      if (known === undefined) {
        assert.ok(![...ids.values()].includes(actual as string), `${path}: one real id for two example ids`);
        ids.set(expected, actual as string);
      } else assert.equal(actual, known, `${path}: the example's ids say this is ${known}`);
      return;
    }
    if (expected && typeof expected === 'object') {
      assert.equal(typeof actual, 'object', path);
      assert.deepEqual(Object.keys(actual as Json).sort(), Object.keys(expected).sort(), path);
      for (const [k, v] of Object.entries(expected)) sameUpToIds((actual as Json)[k], v, `${path}.${k}`);
      return;
    }
    assert.deepEqual(actual, expected, path);
  }

  it('accepts every request example exactly as printed, and answers what the response examples show', async () => {
    assert.ok(Object.keys(requestExamples).length >= 6);
    for (const [name, example] of Object.entries(requestExamples)) {
      const expected = responseExamples[name]!.value;
      const res = await send(JSON.stringify(example.value), { requestId: String(expected['request_id']) });
      const body = (await res.json()) as Json;
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(body)}`);
      const eventType = (example.value['message_info'] as { event_type: EventType }).event_type;
      successSchemas[eventType].parse(body);
      sameUpToIds(body, expected, name);
    }
  });

  it('answers a resend with the first response and Idempotent-Replayed, as the duplicate example says', async () => {
    const first = requestExamples['auto_dialog_text']!.value;
    const res = await send(JSON.stringify(first), { requestId: 'another-id' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('idempotent-replayed'), 'true');
    sameUpToIds(await res.json(), responseExamples['duplicate']!.value, 'duplicate');
  });

  const triggered = (Object.keys(PROBLEM_EXAMPLES) as ProblemCode[]).filter((c) => PROBLEM_EXAMPLES[c].trigger);
  it(`answers the problem examples word for word (${triggered.length} codes)`, async () => {
    assert.ok(triggered.length >= 15);
    for (const code of triggered) {
      const { trigger, problem } = PROBLEM_EXAMPLES[code];
      const expected = problemExample(code);
      const request = () =>
        send(trigger!.body?.(), { method: trigger!.method, path: trigger!.path, headers: trigger!.headers, requestId: String(expected['request_id']) });
      if (trigger!.twice) assert.equal((await request()).status, 200, `${code}: the first send is accepted`);
      const res = await request();
      const body = (await res.json()) as Json;
      assert.equal(res.status, expected['status'], `${code}: ${JSON.stringify(body)}`);
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
      assert.deepEqual(body, expected, code);
      for (const [name, value] of Object.entries(problem.headers)) assert.equal(res.headers.get(name), value, `${code}: ${name}`);
      problemSchema.strict().parse(body);
      for (const [member, codes] of Object.entries(PROBLEM_EXTENSIONS)) {
        assert.equal(member in body, (codes as readonly string[]).includes(code), `${code} and ${member}`);
      }
    }
  });

  it('delivers replies in the form of the webhook schema and its examples', async () => {
    const info = { event_type: 'auto_dialog', msg_id: 'm-9001', group_id: 'g-9', from_user_id: 'u-9', from_user_type: 2, at_list: [EXAMPLE.boundAccount], content: 'Is there a free plan?', send_url: receiver.url };
    const res = await h.post(info, { client: EXAMPLE.client, secret: EXAMPLE.secret });
    assert.equal(res.status, 200);
    h.clock.advance(2000); // the quiet period before a reply
    const delivery = await eventually(() => receiver.received[0], 'the reply delivered');
    assert.ok(verifyDelivery(delivery, EXAMPLE.secret));
    assert.equal(delivery.key, delivery.body.message_info['msg_id']);
    deliveryBodySchema.parse(delivery.body);
    const documented = Object.keys(deliverySchemas.auto_reply.shape);
    for (const key of Object.keys(delivery.body.message_info)) assert.ok(documented.includes(key), `${key} is documented`);
    const example = doc.webhooks['replyDelivery']!.post.requestBody.content['application/json']!.examples['auto_reply_group']!.value;
    assert.deepEqual(Object.keys(delivery.body.message_info).sort(), Object.keys(example['message_info'] as Json).sort());
  });
});

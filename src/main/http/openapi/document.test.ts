import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import canonicalize from 'canonicalize';
import { deliveryInfoSchema } from '../../delivery/outbox.ts';
import { buildOpenApiDocument, renderOpenApi, PROTOCOL_VERSION } from './document.ts';
import { DELIVERY_EXAMPLES, EXAMPLE, REQUEST_EXAMPLES } from './examples.ts';
import { deliveryBodySchema, problemSchema, successSchemas } from './response-schemas.ts';

type Json = Record<string, unknown>;
interface Signed { client: string; signature: string; timestamp: number; message_info: Json }

/** An integrator's check, written from the protocol text rather than with the server's code. */
function signatureHolds(body: Signed, secret: string): boolean {
  const data = `${body.timestamp}.${body.client}.${canonicalize(body.message_info)}`;
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(data, 'utf8').digest('hex') === body.signature;
}

function walk(value: unknown, visit: (v: unknown, path: string) => void, path = '#'): void {
  visit(value, path);
  if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`);
}

const doc = buildOpenApiDocument() as Json & {
  paths: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: Signed }> }> } } }>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: Signed }> }> } } }>;
  components: { examples: Record<string, { value: Json }> };
};

describe('the OpenAPI document', () => {
  it('renders the same text every time: two-space JSON with a trailing newline', () => {
    const text = renderOpenApi();
    assert.equal(renderOpenApi(), text);
    assert.ok(text.endsWith('}\n') && !text.endsWith('\n\n'));
    assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  });

  it('says protocol 1.1, OpenAPI 3.1 and a local server with a port variable', () => {
    assert.equal(PROTOCOL_VERSION, '1.1');
    assert.equal((doc['info'] as Json)['version'], '1.1');
    assert.match(String(doc['openapi']), /^3\.1\./);
    assert.deepEqual((doc['servers'] as Json[])[0]!['url'], 'http://127.0.0.1:{port}');
  });

  it('every $ref points at something in the document', () => {
    walk(doc, (v) => {
      if (!v || typeof v !== 'object' || !('$ref' in v)) return;
      let target: unknown = doc;
      for (const part of String((v as Json)['$ref']).slice(2).split('/')) target = (target as Json | undefined)?.[part];
      assert.ok(target, `${String((v as Json)['$ref'])} resolves`);
    });
  });

  it('request and delivery examples are signed with the published example secret', () => {
    const requests = Object.values(doc.paths['/custom-im/chat-messages']!.post.requestBody.content['application/json']!.examples);
    const deliveries = Object.values(doc.webhooks['replyDelivery']!.post.requestBody.content['application/json']!.examples);
    assert.equal(requests.length, Object.keys(REQUEST_EXAMPLES).length);
    assert.equal(deliveries.length, Object.keys(DELIVERY_EXAMPLES).length);
    for (const { value } of [...requests, ...deliveries]) {
      assert.equal(value.client, EXAMPLE.client);
      assert.ok(signatureHolds(value, EXAMPLE.secret), JSON.stringify(value.message_info));
    }
  });

  it('the first request example is the README\'s first signing test vector', () => {
    const first = doc.paths['/custom-im/chat-messages']!.post.requestBody.content['application/json']!.examples['auto_dialog_text']!.value;
    assert.equal(first.timestamp, 1763715600);
    assert.equal(first.signature, 'd920118d3b8f3addb78634fee85dad9cf895d585c0da94c206eaff5057eae958');
  });

  it('response, delivery and problem examples fit the schemas the document is made from', () => {
    for (const e of Object.values(REQUEST_EXAMPLES)) successSchemas[e.eventType].parse(e.response);
    for (const { value } of Object.values(doc.webhooks['replyDelivery']!.post.requestBody.content['application/json']!.examples)) {
      deliveryBodySchema.parse(value);
      assert.ok(deliveryInfoSchema.safeParse(value.message_info).success, 'the outbox would send it');
    }
    for (const { value } of Object.values(doc.components.examples)) problemSchema.strict().parse(value);
  });
});

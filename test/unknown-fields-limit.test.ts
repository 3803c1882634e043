import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { customerMessage, startHarness, type Harness } from './helpers/harness.ts';
import { LIMITS } from '../src/shared/protocol/message-schema.ts';

const MAX = LIMITS.unknownFieldsMaxBytes;
const base = customerMessage;
/** A string whose field `"name":"…"` is exactly `bytes` long as compact JSON. */
const sized = (name: string, bytes: number): string => 'x'.repeat(bytes - JSON.stringify(name).length - 3);

describe('section 2: unknown fields of message_info are capped together', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    h.addClient('acme', { sendUrl: 'https://hooks.example.com/in' });
  });
  after(() => h.stop());

  it('exactly the limit is accepted and kept; one byte more is 400 validation_failed naming the field, the limit and the size', async () => {
    const fits = await h.post(base({ trace: sized('trace', MAX) }));
    assert.equal(fits.status, 200, JSON.stringify(fits.body));

    const r = await h.post(base({ trace: sized('trace', MAX + 1) }));
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'validation_failed');
    assert.deepEqual(r.body.errors?.map((e) => e.path), ['message_info.trace']);
    assert.match(String(r.body['detail']), new RegExp(`hold ${MAX + 1} bytes of JSON together; the limit is ${MAX} bytes`));
    assert.match(r.body.errors![0]!.message, new RegExp(`of ${MAX + 1} bytes`));
  });

  it("the quote's and the files' own extra fields count too; errors name the largest, as many as must move out", async () => {
    const r = await h.post(
      base({
        content: undefined,
        files_info: [{ content: 'https://cdn.example.com/a.png', file_type: 'image', thumb: 'x'.repeat(50_000) }],
        message_type: 2,
        quote: { msg_id: 'q1', message_type: 1, content: 'y'.repeat(40_000) },
        tag: 'z'.repeat(30_000),
      }),
    );
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors?.map((e) => e.path), ['message_info.files_info[0].thumb', 'message_info.quote.content']);
  });

  it('a name that is no identifier is quoted and shortened in the path; other problems are listed with it', async () => {
    const key = `odd key ${'k'.repeat(100)}`;
    const r = await h.post(base({ [key]: 'z'.repeat(MAX), from_user_type: undefined }));
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors?.map((e) => e.path), [`message_info[${JSON.stringify(`${key.slice(0, 64)}…`)}]`, 'message_info.from_user_type']);
    assert.match(String(r.body['detail']), /; 1 other problem in errors$/);
  });

  it('large known fields do not count: a data: URL file of 100 KB is accepted', async () => {
    const data = Buffer.alloc(100_000, 7).toString('base64');
    const r = await h.post(base({ content: undefined, files_info: [{ content: `data:application/octet-stream;base64,${data}`, file_type: 'file' }] }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
});

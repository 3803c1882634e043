import assert from 'node:assert/strict';
import { startHarness, mid, type Harness } from './harness.ts';
import { openConsole, type ConsoleClient } from './console.ts';

export const ANN = { id: 'ann', name: 'Ann Lee' };

/**
 * A server with client `acme` and no knowledge base, so every website message is handed off at
 * once (flagged at the clock's time), and a console client: the Needs-you API tests' setup.
 */
export async function startNeedsYou(): Promise<{
  h: Harness;
  c: ConsoleClient;
  /** A website visitor's handoff; the clock then moves a minute, so each waits longer than the next. */
  handoff(visitor: string): Promise<string>;
  /** Needs you, longest wait first, by customer id. */
  queue(): Promise<Array<string | null>>;
  stop(): Promise<void>;
}> {
  const h = await startHarness();
  h.addClient('acme');
  const c = await openConsole(h);
  return {
    h,
    c,
    async handoff(visitor) {
      const r = await h.post({ event_type: 'website_dialog', msg_id: mid(), from_user_id: visitor, content: 'I need a person' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      h.clock.advance(60_000);
      return String(r.body['conversation_id']);
    },
    queue: async () => (await c.ok('listConversations', { view: 'needs_you' })).items.map((x) => x.customerId),
    async stop() {
      await c.close();
      await h.stop();
    },
  };
}

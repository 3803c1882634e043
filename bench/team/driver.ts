import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { monoMs, type DriverCommand, type DriverReply, type Sent } from './messages.ts';

/**
 * bench/team's ingest: a process of its own (forked by bench/team/run.ts) sending pre-signed
 * bodies at a fixed rate, open loop (each request is due at its time whatever became of the ones
 * before it, and its latency counts from that time: a slow server shows as latency, not as fewer
 * requests). It notes each request's send time on the shared monotonic clock and the conversation
 * id the answer names, so the consoles process can match the `conversation` events.
 */
function post(url: URL, body: Buffer, agent: Agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, text: '' }));
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.end(body);
  });
}

async function run(c: DriverCommand): Promise<DriverReply> {
  const bodies = readFileSync(c.bodiesFile, 'utf8').split('\n').filter(Boolean).map((l) => Buffer.from(l));
  const total = Math.min(bodies.length, Math.round(c.rate * c.seconds));
  const url = new URL(c.endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets: c.sockets });
  const sent: Sent[] = [];
  const answers: Array<Promise<void>> = [];
  // Sent more than 5 ms after its due time: the driver itself fell behind (a busy machine).
  let late = 0;
  const t0 = monoMs() + 20;
  for (let n = 0; n < total; ) {
    const now = monoMs();
    for (; n < total && t0 + (n * 1000) / c.rate <= now; n++) {
      const due = t0 + (n * 1000) / c.rate;
      const sentAt = monoMs();
      if (sentAt - due > 5) late++;
      answers.push(
        post(url, bodies[n]!, agent).then(({ status, text }) => {
          let conversationId: string | null = null;
          try {
            conversationId = (JSON.parse(text) as { conversation_id?: string }).conversation_id ?? null;
          } catch {
            // Not JSON: a failure, counted by its status.
          }
          sent.push({ conversationId, sentAt, latency: monoMs() - due, status });
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(answers);
  agent.destroy();
  return { type: 'done', sent, late, durationMs: monoMs() - t0 };
}

process.on('message', (m: DriverCommand | { type: 'exit' }) => {
  if (m.type === 'exit') process.exit(0);
  void run(m).then((r) => process.send!(r));
});

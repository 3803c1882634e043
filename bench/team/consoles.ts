import { request, type ClientRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { monoMs, type ConsolesCommand, type ConsolesReply, type FanOut } from './messages.ts';
import { percentile } from '../lib.ts';

/**
 * bench/team's consoles: a process of its own (forked by bench/team/run.ts) holding one
 * `GET /api/events` stream per signed-in agent, as an open console does, with no browser. It notes
 * when each stream first saw a `conversation` event for each conversation id, on the machine's
 * monotonic clock (process.hrtime, shared with the ingest driver's process). Given the driver's
 * send times, it returns the fan-out delay: request sent → event read by each console.
 * Its own event-loop delay is returned too: a busy client shows as delay it did not cause.
 */

interface Stream {
  req: ClientRequest;
  events: Record<string, number>;
  bytes: number;
}

let streams: Stream[] = [];
// Conversation id → first arrival on each stream (NaN: not yet).
let arrivals = new Map<string, Float64Array>();
let loop = monitorEventLoopDelay({ resolution: 10 });

const CONVERSATION = '"type":"conversation"';
const ID = /"conversationId":"([^"]+)"/;

function open(origin: string, token: string, index: number, count: number): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const stream: Stream = { req: null as unknown as ClientRequest, events: {}, bytes: 0 };
    const req = request(`${origin}/api/events`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`event stream ${index}: status ${res.statusCode}`));
      res.setEncoding('utf8');
      let pending = '';
      let connected = false;
      res.on('data', (chunk: string) => {
        const at = monoMs();
        stream.bytes += chunk.length;
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (block.startsWith(':')) {
            if (!connected) {
              connected = true;
              resolve(stream);
            }
            continue;
          }
          // The cheap way (no JSON.parse per event): with 50 streams a busy run reads hundreds of thousands.
          const type = /"type":"(\w+)"/.exec(block)?.[1] ?? 'other';
          stream.events[type] = (stream.events[type] ?? 0) + 1;
          if (!block.includes(CONVERSATION)) continue;
          const id = ID.exec(block)?.[1];
          if (!id) continue;
          let seen = arrivals.get(id);
          if (!seen) arrivals.set(id, (seen = new Float64Array(count).fill(NaN)));
          if (Number.isNaN(seen[index]!)) seen[index] = at;
        }
      });
      res.on('error', () => {});
    });
    // After the stream opened, an error is its close at the phase's end: nothing to report.
    req.on('error', reject);
    stream.req = req;
    req.end();
  });
}

function summarize(sends: Array<[string, number]>, count: number): FanOut {
  const each: number[] = [];
  const all: number[] = [];
  let missing = 0;
  for (const [id, sentAt] of sends) {
    const seen = arrivals.get(id);
    let last = -Infinity;
    for (let i = 0; i < count; i++) {
      const at = seen?.[i] ?? NaN;
      // An arrival before the send is an earlier message's event: this one's never came.
      if (Number.isNaN(at) || at < sentAt) {
        missing++;
        last = NaN;
        continue;
      }
      each.push(at - sentAt);
      last = Math.max(last, at - sentAt);
    }
    if (!Number.isNaN(last)) all.push(last);
  }
  const e = Float64Array.from(each).sort();
  const a = Float64Array.from(all).sort();
  const events: Record<string, number> = {};
  for (const s of streams) for (const [k, v] of Object.entries(s.events)) events[k] = (events[k] ?? 0) + v;
  return {
    pairs: e.length,
    missing,
    each: { p50: percentile(e, 50), p99: percentile(e, 99), max: e.length ? e[e.length - 1]! : NaN },
    allConsoles: { p50: percentile(a, 50), p99: percentile(a, 99), max: a.length ? a[a.length - 1]! : NaN },
    events,
    bytes: streams.reduce((n, s) => n + s.bytes, 0),
    // What lies beyond the 10 ms sampling interval, as serve's own gauges report it.
    clientLoopP99: Math.max(0, loop.percentile(99) / 1e6 - 10),
    clientLoopMax: Math.max(0, loop.max / 1e6 - 10),
  };
}

process.on('message', (m: ConsolesCommand) => {
  const reply = (r: ConsolesReply): void => void process.send!(r);
  if (m.type === 'open') {
    arrivals = new Map();
    loop = monitorEventLoopDelay({ resolution: 10 });
    Promise.all(m.tokens.map((t, i) => open(m.origin, t, i, m.tokens.length))).then(
      (s) => {
        streams = s;
        loop.enable();
        reply({ type: 'opened', count: s.length });
      },
      (e: Error) => reply({ type: 'failed', error: e.message }),
    );
  } else if (m.type === 'close') {
    loop.disable();
    const result = summarize(m.sends, streams.length);
    for (const s of streams) s.req.destroy();
    streams = [];
    arrivals = new Map();
    reply({ type: 'closed', fanOut: result });
  } else if (m.type === 'exit') {
    process.exit(0);
  }
});

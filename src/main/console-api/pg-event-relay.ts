import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { assertNever } from '../../shared/assert-never.ts';
import { systemClock, type Clock } from '../../shared/clock.ts';
import type { ConsoleEvent } from '../../shared/console-api.ts';
import type { EventBus } from './events.ts';
import { createDecoder, encodeEvent, encodeHello, NODE_ID } from './pg-event-wire.ts';

/**
 * Console events between nodes over PostgreSQL LISTEN/NOTIFY. Each event emitted on this node's
 * bus goes out on one channel; each event another node sent is handed to this node's consoles
 * (bus.deliver: each console still gets only what isFor lets it see, and it is not sent back out).
 *
 * emit stays synchronous: publishing queues the payloads, and one dedicated connection sends
 * them in order, as many as are waiting in one statement (one transaction: delivered together,
 * in order). The queue is capped in bytes: while PostgreSQL is slow or down, the events past the
 * cap are dropped, counted and logged, and the other nodes see the gap in the numbers and resync.
 *
 * A lost connection (PostgreSQL restarted, the backend terminated) is opened again with backoff,
 * LISTEN again, and this node's consoles get one `resync` event: what other nodes sent meanwhile
 * never arrived here.
 */

export const EVENTS_CHANNEL = 'switchboard_console_events';

export interface PgEventRelayOptions {
  /** A new, not yet connected client for the relay alone (LISTEN holds it; not from a pool). keepAlive on, so a dead peer is noticed. */
  newClient: () => pg.Client;
  /** This node's name in payloads (letters, digits, . _ : -; at most 64). */
  nodeId: string;
  bus: EventBus;
  log: (line: string) => void;
  clock?: Clock;
  /** Most bytes of payloads waiting to be sent (default 4 MB). */
  maxQueueBytes?: number;
  /** Reconnection delays: the first, doubled at each failure up to the last (default 250 ms → 10 s). */
  backoff?: { firstMs: number; maxMs: number };
  /** At most one resync per this long (a burst of gaps reloads each console once), default 1 s. */
  resyncEveryMs?: number;
  /**
   * Another node said hello: it listens now, having just started or got its link back, and missed
   * what was said before (who is online on this node: say it again).
   */
  onHello?: (node: string) => void;
}

export interface PgEventRelayState {
  connection: 'connecting' | 'live' | 'waiting' | 'closed';
  /** The relay's backend (pg_backend_pid) while live. */
  backendPid: number | null;
  queuedEvents: number;
  queuedBytes: number;
  /** Events published, sent (NOTIFY committed), received and delivered from other nodes. */
  published: number;
  sent: number;
  delivered: number;
  dropped: { queueFull: number; tooBig: number; malformed: number; duplicate: number };
  /** Connections lost or refused since the start. */
  reconnects: number;
  resyncs: number;
}

export interface PgEventRelay {
  /** Sends `event` to the other nodes; never throws, never waits. The bus's onEmit calls it already: only for events not emitted on `bus`. */
  publish(event: ConsoleEvent): void;
  /** Resolves once the relay first listens (it keeps trying until then, or until closed). */
  ready: Promise<void>;
  /** Sends what is queued if it can, then ends the connection. */
  close(): Promise<void>;
  readonly state: PgEventRelayState;
}

const NOTIFY_BATCH = 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p';
/** Payloads per statement: one transaction's worth, a few MB at most. */
const BATCH_MAX = 500;

/** An error PostgreSQL answered a statement with (SQLSTATE), not one of a connection lost, a server shutting down or out of resources. */
function refused(e: unknown): e is Error {
  const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : '';
  return /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57|58)/.test(code);
}

export function startPgEventRelay(o: PgEventRelayOptions): PgEventRelay {
  if (!NODE_ID.test(o.nodeId)) throw new Error(`node id "${o.nodeId}": use 1 to 64 letters, digits, . _ : or -`);
  const clock = o.clock ?? systemClock;
  const maxQueueBytes = o.maxQueueBytes ?? 4 * 1024 * 1024;
  const { firstMs, maxMs } = o.backoff ?? { firstMs: 250, maxMs: 10_000 };
  const resyncEveryMs = o.resyncEveryMs ?? 1000;
  const run = randomBytes(6).toString('base64url');
  const decoder = createDecoder(o.nodeId);
  const state: PgEventRelayState = { connection: 'connecting', backendPid: null, queuedEvents: 0, queuedBytes: 0, published: 0, sent: 0, delivered: 0, dropped: { queueFull: 0, tooBig: 0, malformed: 0, duplicate: 0 }, reconnects: 0, resyncs: 0 };

  /** Each event's payloads (several for one split in parts: they go in one statement). */
  let queue: Array<{ payloads: string[]; bytes: number }> = [];
  let head = 0;
  let seq = 0;
  let current: pg.Client | null = null;
  let sending: Promise<void> | null = null;
  let flushSoon: NodeJS.Immediate | null = null;
  let overflowFrom = -1;
  let everLive = false;
  /** Attempts since the relay last listened: the backoff's exponent. */
  let attempts = 0;
  let cancelRetry: (() => void) | null = null;
  let lastResync = -Infinity;
  let cancelResync: (() => void) | null = null;
  let markReady!: () => void;
  const ready = new Promise<void>((ok) => (markReady = ok));

  function publish(event: ConsoleEvent): void {
    // A resync is about this node's link, for its own consoles.
    if (state.connection === 'closed' || event.type === 'resync') return;
    state.published++;
    const payloads = encodeEvent(o.nodeId, run, ++seq, event);
    if (!payloads) {
      state.dropped.tooBig++;
      o.log(`console events: a ${event.type} event is too big to send to other nodes even in parts; dropped (they resync)`);
      return;
    }
    const bytes = payloads.reduce((sum, p) => sum + Buffer.byteLength(p), 0);
    if (state.queuedBytes + bytes > maxQueueBytes) {
      state.dropped.queueFull++;
      if (overflowFrom < 0) {
        overflowFrom = state.dropped.queueFull - 1;
        o.log(`console events: ${state.queuedEvents} events (${state.queuedBytes} bytes) wait for PostgreSQL; dropping new ones until they are sent (other nodes resync)`);
      }
      return;
    }
    queue.push({ payloads, bytes });
    state.queuedEvents++;
    state.queuedBytes += bytes;
    // Everything emitted in this turn goes in one statement.
    flushSoon ??= setImmediate(flush);
  }

  function flush(): void {
    flushSoon = null;
    const client = current;
    if (sending || state.connection !== 'live' || !client || head >= queue.length) return;
    const batch: string[] = [];
    let end = head;
    let bytes = 0;
    while (end < queue.length && batch.length + queue[end]!.payloads.length <= Math.max(BATCH_MAX, queue[head]!.payloads.length)) {
      batch.push(...queue[end]!.payloads);
      bytes += queue[end]!.bytes;
      end++;
    }
    sending = client.query(NOTIFY_BATCH, [EVENTS_CHANNEL, batch]).then(
      () => {
        state.sent += end - head;
        state.queuedEvents -= end - head;
        state.queuedBytes -= bytes;
        head = end;
        if (head > 1024 && head * 2 > queue.length) [queue, head] = [queue.slice(head), 0];
        if (overflowFrom >= 0 && state.queuedBytes * 2 < maxQueueBytes) {
          o.log(`console events: sending again; ${state.dropped.queueFull - overflowFrom} events were dropped`);
          overflowFrom = -1;
        }
        return true;
      },
      (e: unknown) => {
        if (refused(e)) {
          // PostgreSQL read the statement and said no: it would say no again.
          o.log(`console events: PostgreSQL refused ${end - head} events (${e.message}); dropped`);
          state.dropped.tooBig += end - head;
          state.queuedEvents -= end - head;
          state.queuedBytes -= bytes;
          head = end;
          return true;
        }
        // Anything else is the connection's fault: the batch waits for the next one (which resyncs).
        lost(client, e);
        return false;
      },
    ).then((more) => {
      sending = null;
      if (more && head < queue.length) flushSoon ??= setImmediate(flush);
    });
  }

  function receive(payload: string): void {
    const got = decoder.receive(payload);
    if ((got.kind === 'event' || got.kind === 'malformed') && got.missed > 0) {
      o.log(`console events: ${got.missed} events from another node never arrived; consoles resync`);
      resync();
    }
    switch (got.kind) {
      case 'event':
        state.delivered++;
        o.bus.deliver(got.event, got.node);
        return;
      case 'hello':
        o.onHello?.(got.node);
        return;
      case 'malformed':
        state.dropped.malformed++;
        o.log(`console events: dropped a notification on ${EVENTS_CHANNEL}: ${got.why}`);
        return;
      case 'duplicate':
        state.dropped.duplicate++;
        return;
      case 'partial':
      case 'own':
        return;
      default:
        return assertNever(got, 'received notification');
    }
  }

  /** Tells this node's consoles to load again, at most once per resyncEveryMs. */
  function resync(): void {
    if (cancelResync || state.connection === 'closed') return;
    const wait = lastResync + resyncEveryMs - clock.now();
    const go = (): void => {
      cancelResync = null;
      lastResync = clock.now();
      state.resyncs++;
      o.bus.deliver({ type: 'resync' });
    };
    if (wait <= 0) go();
    else cancelResync = clock.after(wait, go);
  }

  function lost(client: pg.Client, why: unknown): void {
    if (current !== client) return;
    current = null;
    state.backendPid = null;
    const was = state.connection;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    if (was === 'closed') return;
    state.connection = 'waiting';
    const delay = Math.min(maxMs, firstMs * 2 ** Math.min(attempts++, 20));
    state.reconnects++;
    o.log(`console events: ${was === 'live' ? 'lost the connection to' : 'could not listen on'} PostgreSQL (${why instanceof Error ? why.message : String(why)}); trying again in ${delay} ms`);
    cancelRetry = clock.after(delay, connect);
  }

  function connect(): void {
    cancelRetry = null;
    if (state.connection === 'closed') return;
    state.connection = 'connecting';
    const client = o.newClient();
    current = client;
    // Errors after the end (or a second one) must not reach Node as unhandled 'error' events.
    client.on('error', (e) => lost(client, e));
    client.on('end', () => lost(client, 'the connection ended'));
    client.on('notification', (m) => {
      if (current !== client || m.channel !== EVENTS_CHANNEL || m.payload === undefined) return;
      try {
        receive(m.payload);
      } catch (e) {
        // A console's listener that throws must not unwind into the driver's socket reading.
        o.log(`console events: delivering a notification failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
    void (async () => {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(EVENTS_CHANNEL)}`);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      return rows[0]?.pid ?? null;
    })().then(
      (pid) => {
        if (current !== client || state.connection === 'closed') return;
        state.connection = 'live';
        state.backendPid = pid;
        attempts = 0;
        if (everLive) {
          // Whatever other nodes sent while this one was not listening never came.
          decoder.reset();
          o.log('console events: listening again; consoles resync');
          resync();
        }
        everLive = true;
        markReady();
        // Not an event: no number, not queued or counted. A hello lost with the connection costs
        // only the wait for the others' next repeat; the next connection says it again.
        client.query(NOTIFY_BATCH, [EVENTS_CHANNEL, [encodeHello(o.nodeId, run, seq + 1)]]).catch(() => undefined);
        flushSoon ??= setImmediate(flush);
      },
      (e: unknown) => lost(client, e),
    );
  }

  const unhook = o.bus.onEmit(publish);
  connect();

  return {
    publish,
    ready,
    get state() {
      return state;
    },
    async close() {
      if (state.connection === 'closed') return;
      unhook();
      cancelRetry?.();
      cancelResync?.();
      if (flushSoon) clearImmediate(flushSoon);
      flushSoon = null;
      // What was emitted before close still goes, if the connection is there to take it.
      while (state.connection === 'live' && (sending || head < queue.length)) {
        if (!sending) flush();
        const before = head;
        await sending;
        if (head === before) break;
      }
      state.connection = 'closed';
      markReady();
      const client = current;
      current = null;
      state.backendPid = null;
      if (client) await client.end().catch(() => undefined);
    },
  };
}

import type { LoggedRequest, RequestLogEntry } from '../store/request-log.ts';
import { addressKey } from '../auth/address-limiter.ts';
import { newId } from '../store/ids.ts';
import type { Reply, RequestFacts } from './chat-messages.ts';

export interface AggregationSettings {
  enabled: boolean;
  windowSeconds: number;
  /** Refusals of one kind per window that still get a row each. */
  rowsPerWindow: number;
}

/** What the logger asks the writer thread to do (a subset of its write commands). */
export type LogCommand =
  | { kind: 'request_log'; entry: LoggedRequest; aggKey?: string }
  | { kind: 'request_log_count'; aggKey: string; count: number; lastAt: number; close: boolean };

interface Window {
  start: number;
  seen: number;
  /** The row later refusals are counted on, once there is one. */
  aggKey: string | null;
  /** Counted here, not yet on the row. */
  pending: number;
  lastAt: number;
  status: number;
  code: string | null;
}

/** Kinds of refusal tracked at once; past it the oldest window is closed early. Bounds memory. */
const MAX_WINDOWS = 10_000;

/**
 * Decides which requests get a row of their own. Accepted requests always do (the console links
 * them to messages). Refusals of one kind, the same (remote address, or client once authenticated,
 * status, code), within a window: the first few get a row each, so an integrator can still find
 * one by its request id and read its problem; the rest are counted on one more row, and the count
 * reaches the database on `flush` (every second) rather than a write per request.
 */
export function createRequestLogger(settings: AggregationSettings, write: (command: LogCommand) => void, maxWindows = MAX_WINDOWS) {
  const windows = new Map<string, Window>();
  const windowMs = settings.windowSeconds * 1000;

  const close = (key: string, w: Window): void => {
    if (w.aggKey) write({ kind: 'request_log_count', aggKey: w.aggKey, count: w.pending, lastAt: w.lastAt, close: true });
    windows.delete(key);
  };

  return {
    /**
     * Logs one answered request; true when a new row was written. `authenticated`: its signature
     * was checked; a row without it is unverified, and the client it named only its claim.
     */
    log(request: RequestLogEntry, authenticated: boolean): boolean {
      const entry: LoggedRequest = { ...request, verified: authenticated };
      if (!settings.enabled || entry.status < 400) {
        write({ kind: 'request_log', entry });
        return true;
      }
      const who = authenticated && entry.clientId !== null ? `client ${entry.clientId}` : `address ${addressKey(entry.remote ?? undefined)}`;
      const key = `${who} ${entry.status} ${entry.code ?? ''}`;
      let w = windows.get(key);
      if (w && entry.at - w.start >= windowMs) {
        close(key, w);
        w = undefined;
      }
      if (!w) {
        if (windows.size >= maxWindows) {
          const [oldestKey, oldest] = windows.entries().next().value!;
          close(oldestKey, oldest);
        }
        w = { start: entry.at, seen: 0, aggKey: null, pending: 0, lastAt: entry.at, status: entry.status, code: entry.code };
        windows.set(key, w);
      }
      w.seen++;
      if (w.seen <= settings.rowsPerWindow) {
        write({ kind: 'request_log', entry });
        return true;
      }
      if (w.aggKey === null) {
        w.aggKey = newId('request');
        w.lastAt = entry.at;
        // An IPv6 row that counts many requests stands for the whole /64 they came from.
        const remote = authenticated ? entry.remote : addressKey(entry.remote ?? undefined);
        write({ kind: 'request_log', entry: { ...entry, remote }, aggKey: w.aggKey });
        return true;
      }
      w.pending++;
      if (entry.at > w.lastAt) w.lastAt = entry.at;
      return false;
    },
    /**
     * Puts the counts gathered since the last call on their rows and forgets windows that have
     * ended (all of them with `all`); returns a status and code counted, for the live console.
     */
    flush(now: number, all = false): { status: number; code: string | null } | null {
      let counted: { status: number; code: string | null } | null = null;
      for (const [key, w] of windows) {
        if (w.pending > 0) counted = { status: w.status, code: w.code };
        if (all || now - w.start >= windowMs) close(key, w);
        else if (w.pending > 0 && w.aggKey) {
          write({ kind: 'request_log_count', aggKey: w.aggKey, count: w.pending, lastAt: w.lastAt, close: false });
          w.pending = 0;
        }
      }
      return counted;
    },
    /** Refusal kinds being counted now. */
    size: () => windows.size,
  };
}

export type RequestLogger = ReturnType<typeof createRequestLogger>;

/** The request log's row for one answered chat request, and whether it was authenticated. */
export function chatLogEntry(r: {
  at: number;
  requestId: string;
  method: string;
  path: string;
  facts: RequestFacts;
  reply: Reply;
  latencyMs: number;
  remote: string | undefined;
}): { entry: RequestLogEntry; authenticated: boolean } {
  const problem = r.reply.status >= 400 && 'body' in r.reply ? (r.reply.body as { code?: string }) : null;
  const { authenticated = false, ...logged } = r.facts;
  const entry: RequestLogEntry = {
    at: r.at,
    requestId: r.requestId,
    method: r.method,
    path: r.path,
    ...logged,
    status: r.reply.status,
    code: problem?.code ?? null,
    latencyMs: Math.round(r.latencyMs * 1000) / 1000,
    problem: problem ? JSON.stringify(problem) : null,
    remote: r.remote ?? null,
  };
  return { entry, authenticated };
}

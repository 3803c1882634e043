/**
 * The console's HTTP API as the console calls it: POST /api/<method>, JSON, the token from the
 * printed console URL as a Bearer header, `{ ok, value }` back. bench/scale drives it to time the
 * console's queries and to replay an hour of console use before reading the server's RSS.
 */
export interface Call<T> {
  ms: number;
  bytes: number;
  value: T;
}

export interface ConsoleApi {
  call<T = unknown>(method: string, input: Record<string, unknown>): Promise<Call<T>>;
}

export function consoleApi(base: string, token: string): ConsoleApi {
  return {
    async call<T>(method: string, input: Record<string, unknown>): Promise<Call<T>> {
      const started = performance.now();
      const res = await fetch(`${base.replace(/\/$/, '')}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(input),
      });
      const text = await res.text();
      const ms = performance.now() - started;
      const body = JSON.parse(text) as { ok: boolean; value?: T; error?: { code: string; message: string } };
      if (!body.ok) throw new Error(`console ${method} ${JSON.stringify(input)}: ${body.error?.code} ${body.error?.message}`);
      return { ms, bytes: Buffer.byteLength(text), value: body.value as T };
    },
  };
}

export interface ListPage {
  items: Array<{ id: string }>;
  nextCursor: unknown;
}

/**
 * listConversations answers an array today; with keyset paging it answers `{ items, nextCursor }`
 * and takes `cursor`. Both read as a page here, so the driver works on either server.
 */
export function asPage(value: unknown): ListPage {
  if (Array.isArray(value)) return { items: value as ListPage['items'], nextCursor: null };
  const v = value as { items?: ListPage['items']; nextCursor?: unknown };
  return { items: v.items ?? [], nextCursor: v.nextCursor ?? null };
}

export type ListApi = 'array' | 'paged';

/** Which listConversations this server has: an array (the console asks for everything) or pages. */
export async function listApiOf(api: ConsoleApi): Promise<ListApi> {
  const r = await api.call('listConversations', { limit: 1 });
  return Array.isArray(r.value) ? 'array' : 'paged';
}

/** The console's page of the list: all of it (limit 20,000) on the array API, 200 rows a page when paged. */
export const CONSOLE_ARRAY_LIMIT = 20_000;
export const PAGE_LIMIT = 200;

/** The list as the console loads it: its first request, and (paged) the next `pages - 1` pages as it scrolls. */
export async function loadList(api: ConsoleApi, kind: ListApi, filter: Record<string, unknown>, pages: number): Promise<{ first: Call<unknown>; items: ListPage['items']; calls: number }> {
  const limit = kind === 'array' ? CONSOLE_ARRAY_LIMIT : PAGE_LIMIT;
  const first = await api.call('listConversations', { ...filter, limit });
  let page = asPage(first.value);
  const items = [...page.items];
  let calls = 1;
  while (kind === 'paged' && page.nextCursor !== null && calls < pages) {
    page = asPage((await api.call('listConversations', { ...filter, limit, cursor: page.nextCursor })).value);
    items.push(...page.items);
    calls++;
  }
  return { first, items, calls };
}

export interface HourOfUse {
  /** Requests one hour of console use makes, by kind. */
  planned: Record<string, number>;
  done: Record<string, number>;
  /** Console time replayed (minutes), when the cap stopped it early. */
  minutes: number;
  ms: number;
}

/**
 * One hour of an operator's console, compressed: what the console asks in an hour, in the order
 * it would ask, sent back to back. Dashboard stats every 5 s, a search every 2 s (the list with
 * a search term), the list reloaded every 30 s and scrolled 5 pages down, a transcript opened
 * every 10 s (one in ten the long one). Stops after `capMs` of wall time.
 */
export async function replayHour(api: ConsoleApi, kind: ListApi, o: { terms: string[]; conversations: string[]; long: string; statsMinutes: number; capMs: number }): Promise<HourOfUse> {
  const events: Array<{ at: number; kind: 'stats' | 'search' | 'list' | 'transcript' }> = [];
  for (let s = 0; s < 3600; s++) {
    if (s % 5 === 0) events.push({ at: s, kind: 'stats' });
    if (s % 2 === 0) events.push({ at: s, kind: 'search' });
    if (s % 30 === 0) events.push({ at: s, kind: 'list' });
    if (s % 10 === 0) events.push({ at: s, kind: 'transcript' });
  }
  const planned: Record<string, number> = {};
  const done: Record<string, number> = {};
  for (const e of events) planned[e.kind] = (planned[e.kind] ?? 0) + 1;
  const started = performance.now();
  let n = 0;
  let lastAt = 0;
  for (const e of events) {
    if (performance.now() - started > o.capMs) break;
    n++;
    switch (e.kind) {
      case 'stats':
        await api.call('stats', { minutes: o.statsMinutes });
        break;
      case 'search':
        await api.call('listConversations', { search: o.terms[n % o.terms.length]!, limit: kind === 'array' ? CONSOLE_ARRAY_LIMIT : PAGE_LIMIT });
        break;
      case 'list':
        await loadList(api, kind, {}, 5);
        break;
      case 'transcript': {
        const id = n % 10 === 0 ? o.long : o.conversations[n % o.conversations.length]!;
        await api.call('getTranscript', { conversationId: id, limit: 50 });
        break;
      }
    }
    done[e.kind] = (done[e.kind] ?? 0) + 1;
    lastAt = e.at;
  }
  return { planned, done, minutes: Math.round((lastAt + 1) / 6) / 10, ms: performance.now() - started };
}

import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { createConsoleServer } from '../../src/main/console-api/console-server.ts';
import { digestOf } from '../../src/main/accounts/sessions.ts';
import type { Store } from '../../src/main/store/index.ts';
import type { RunningService } from '../../src/main/service.ts';
import type { ApiResult, ConsoleEvent, ConsoleMethod, ConsoleOutputs } from '../../src/shared/console-api.ts';
import { readEventStream } from './event-stream.ts';

/** The console listener over a service, serving the built console when `rendererDir` has it. */
export async function listen(service: RunningService, rendererDir = '/nonexistent'): Promise<{ server: Server; base: string }> {
  const server = createConsoleServer({ rendererDir, accounts: service.console.accounts, handlers: service.console.handlers, events: service.console.events });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * An agent account and a signed-in session for it, as the CLI and the sign-in page make them
 * (the page is another helper's): the account through the store, a one-time link, then the
 * sign-in route that uses it. Returns the session token.
 */
export async function signedInAgent(base: string, store: Store, id: string, name: string, now: number, o: { role?: 'admin' | 'agent'; capacity?: number } = {}): Promise<string> {
  if (!store.accounts.get(id)) store.accounts.add({ id, name, role: o.role ?? 'agent', capacity: o.capacity ?? 5, now });
  const link = randomBytes(24).toString('base64url');
  store.accounts.replaceSignInLink(id, digestOf(link), now + 3_600_000, now);
  const res = await fetch(`${base}/api/auth/usePasswordLink`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ link, password: 'correct horse battery staple' }) });
  const body = (await res.json()) as { ok: boolean; value?: { token: string }; error?: { message: string } };
  if (!body.ok || !body.value) throw new Error(`sign-in of ${id} failed: ${body.error?.message}`);
  return body.value.token;
}

export interface TeamConsole {
  call<M extends ConsoleMethod>(method: M, input?: unknown): Promise<{ status: number; body: ApiResult<ConsoleOutputs[M]> }>;
  ok<M extends ConsoleMethod>(method: M, input?: unknown): Promise<ConsoleOutputs[M]>;
  /** Live events this console received on its stream. */
  events: ConsoleEvent[];
  /** Resolves with the first event (already received or to come) that `match` accepts. */
  next<T extends ConsoleEvent>(match: (e: ConsoleEvent) => e is T, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

/** A console signed in with `token`: API calls and its event stream, as the browser console makes them. */
export async function teamConsole(base: string, token: string): Promise<TeamConsole> {
  const call = async <M extends ConsoleMethod>(method: M, input: unknown = {}) => {
    const r = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
    return { status: r.status, body: (await r.json()) as ApiResult<ConsoleOutputs[M]> };
  };
  const events: ConsoleEvent[] = [];
  const waiters = new Set<() => void>();
  const controller = new AbortController();
  const res = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const reading = readEventStream(res, events, () => {
    for (const w of waiters) w();
  });
  return {
    call,
    async ok(method, input) {
      const r = await call(method, input);
      if (!r.body.ok) throw new Error(`${method} failed: ${r.body.error.code}: ${r.body.error.message}`);
      return r.body.value;
    },
    events,
    next(match, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = events.find(match);
          if (!hit) return false;
          waiters.delete(look);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const look = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(look);
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.type))}`));
        }, timeoutMs);
        if (!check()) waiters.add(look);
      });
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

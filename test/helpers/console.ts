import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Harness } from './harness.ts';
import { createConsoleServer } from '../../src/main/console-api/console-server.ts';
import { consoleTokenAtStart } from '../../src/main/console-api/console-token.ts';
import { secretKeyPath } from '../../src/main/store/data-dir.ts';
import type { ApiResult, ConsoleEvent, ConsoleMethod, ConsoleOutputs } from '../../src/shared/console-api.ts';
import { readEventStream } from './event-stream.ts';

export interface ConsoleClient {
  /** A console API call over HTTP, as the browser console makes it (JSON, Bearer token). */
  call<M extends ConsoleMethod>(method: M, input?: unknown): Promise<ApiResult<ConsoleOutputs[M]>>;
  /** The value of a call that must succeed. */
  ok<M extends ConsoleMethod>(method: M, input?: unknown): Promise<ConsoleOutputs[M]>;
  /** Live events received on /api/events since the console opened. */
  events: ConsoleEvent[];
  close(): Promise<void>;
}

/** The headless console listener over the harness's service, with its event stream open. */
export async function openConsole(h: Harness): Promise<ConsoleClient> {
  const token = consoleTokenAtStart(h.service.store.settings, secretKeyPath(h.dataDir)).token;
  const server: Server = createConsoleServer({
    rendererDir: '/nonexistent',
    accounts: h.service.console.accounts,
    handlers: h.service.console.handlers,
    events: h.service.console.events,
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const client = await connectConsole(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, token);
  return {
    ...client,
    async close() {
      await client.close();
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A console API client of the console listening at `base` (as a browser console uses it), its event stream open; `eventTimes[i]` is when events[i] arrived (Date.now()). */
export async function connectConsole(base: string, token: string): Promise<ConsoleClient & { eventTimes: number[] }> {
  const call = async <M extends ConsoleMethod>(method: M, input: unknown = {}): Promise<ApiResult<ConsoleOutputs[M]>> => {
    const r = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(input) });
    return (await r.json()) as ApiResult<ConsoleOutputs[M]>;
  };
  const events: ConsoleEvent[] = [];
  const eventTimes: number[] = [];
  const controller = new AbortController();
  const res = await fetch(`${base}/api/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  if (!res.ok) throw new Error(`event stream refused: ${res.status} ${await res.text()}`);
  const reading = readEventStream(res, events, () => {
    while (eventTimes.length < events.length) eventTimes.push(Date.now());
  });
  return {
    call,
    async ok(method, input) {
      const r = await call(method, input);
      if (!r.ok) throw new Error(`${method} failed: ${r.error.code}: ${r.error.message}`);
      return r.value;
    },
    events,
    eventTimes,
    async close() {
      controller.abort();
      await reading;
    },
  };
}

import { createConsoleClient, type ApiResult, type ConsoleClient, type ConsoleEvent, type ConsoleMethod } from '../../../shared/console-api.ts';

/** What the Electron preload exposes; absent in a browser. */
interface PreloadBridge {
  call(method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>>;
  onEvent(listener: (event: ConsoleEvent) => void): () => void;
}

declare global {
  interface Window {
    switchboard?: PreloadBridge;
  }
}

async function httpCall(method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>> {
  try {
    const res = await fetch(`/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input ?? {}) });
    return (await res.json()) as ApiResult<unknown>;
  } catch (error) {
    return { ok: false, error: { code: 'unreachable', message: `cannot reach the service: ${(error as Error).message}` } };
  }
}

function httpEvents(listener: (event: ConsoleEvent) => void): () => void {
  const source = new EventSource('/api/events');
  source.onmessage = (m) => listener(JSON.parse(m.data as string) as ConsoleEvent);
  return () => source.close();
}

/** The same typed client over IPC in the desktop app and over HTTP in a browser. */
export const api: ConsoleClient = createConsoleClient(window.switchboard ? (m, i) => window.switchboard!.call(m, i) : httpCall);
export const subscribe: (listener: (event: ConsoleEvent) => void) => () => void = window.switchboard
  ? (l) => window.switchboard!.onEvent(l)
  : httpEvents;

import { createConsoleClient, type ApiResult, type ConsoleClient, type ConsoleEvent, type ConsoleMethod } from '../../../shared/console-api.ts';
import { consoleToken, takeTokenFromUrl, tokenRefused } from './console-token.ts';
import { openEventStream } from './event-stream.ts';

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

const NO_TOKEN: ApiResult<unknown> = {
  ok: false,
  error: { code: 'unauthorized', message: 'console token missing: open the console URL that serve printed' },
};

async function httpCall(method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>> {
  const token = consoleToken();
  if (token === null) {
    tokenRefused(null);
    return NO_TOKEN;
  }
  try {
    const res = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(input ?? {}),
    });
    if (res.status === 401) tokenRefused(token);
    return (await res.json()) as ApiResult<unknown>;
  } catch (error) {
    return { ok: false, error: { code: 'unreachable', message: `cannot reach the service: ${(error as Error).message}` } };
  }
}

function httpEvents(listener: (event: ConsoleEvent) => void, onReconnect: () => void = () => {}): () => void {
  let sent: string | null = null;
  return openEventStream({
    url: '/api/events',
    headers: () => {
      sent = consoleToken();
      return sent === null ? null : { authorization: `Bearer ${sent}` };
    },
    onData: (data) => {
      let event: ConsoleEvent;
      try {
        event = JSON.parse(data) as ConsoleEvent;
      } catch {
        return; // not JSON: nothing this console can show
      }
      listener(event);
    },
    onUnauthorized: () => tokenRefused(sent),
    onReconnect,
  });
}

// The desktop window talks IPC and has no token; a browser tab takes it from the URL first.
if (!window.switchboard) takeTokenFromUrl();

/** The same typed client over IPC in the desktop app and over HTTP in a browser. */
export const api: ConsoleClient = createConsoleClient(window.switchboard ? (m, i) => window.switchboard!.call(m, i) : httpCall);
/** Live events; `onReconnect` runs when a dropped browser stream is back (events were missed). */
export const subscribe: (listener: (event: ConsoleEvent) => void, onReconnect?: () => void) => () => void = window.switchboard
  ? (l) => window.switchboard!.onEvent(l)
  : httpEvents;

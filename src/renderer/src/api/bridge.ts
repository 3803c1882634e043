import type { TeamDialogBridge } from '../../../shared/team-ipc.ts';
import { createConsoleClient, type ApiResult, type ConsoleClient, type ConsoleEvent, type ConsoleMethod } from '../../../shared/console-api.ts';
import { consoleToken, takeTokenFromUrl, tokenAccepted, tokenRefused } from './console-token.ts';
import { openEventStream, type StreamState } from './event-stream.ts';
import { reconnectMaxMs, streamSilenceMs } from './timing.ts';

/** What the Electron preload exposes; absent in a browser. */
interface PreloadBridge {
  call(method: ConsoleMethod, input: unknown): Promise<ApiResult<unknown>>;
  onEvent(listener: (event: ConsoleEvent) => void): () => void;
  /** The Team server dialog's calls (src/preload/index.ts). */
  team?: TeamDialogBridge;
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
    else tokenAccepted(token);
    return (await res.json()) as ApiResult<unknown>;
  } catch (error) {
    return { ok: false, error: { code: 'unreachable', message: `cannot reach the service: ${(error as Error).message}` } };
  }
}

export type { StreamState } from './event-stream.ts';

export interface StreamHooks {
  /** The stream is back after a drop: events in between were missed. */
  onReconnect?: () => void;
  /** The connection as the operator should see it (the desktop window's IPC is always live). */
  onState?: (state: StreamState, since: number) => void;
}

let wakeStream: () => void = () => {};

/** Reconnect now instead of waiting out the back-off. */
export function reconnectNow(): void {
  wakeStream();
}

function httpEvents(listener: (event: ConsoleEvent) => void, hooks: StreamHooks = {}): () => void {
  let sent: string | null = null;
  const stream = openEventStream({
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
    onReconnect: hooks.onReconnect ?? (() => {}),
    onState: hooks.onState,
    silenceMs: streamSilenceMs,
    maxDelayMs: reconnectMaxMs,
  });
  wakeStream = stream.wake;
  return () => stream.close();
}

function ipcEvents(listener: (event: ConsoleEvent) => void, hooks: StreamHooks = {}): () => void {
  hooks.onState?.('live', Date.now());
  return window.switchboard!.onEvent(listener);
}

// The desktop window talks IPC and has no token; a browser tab takes it from the URL first.
if (!window.switchboard) takeTokenFromUrl();

/** The same typed client over IPC in the desktop app and over HTTP in a browser. */
export const api: ConsoleClient = createConsoleClient(window.switchboard ? (m, i) => window.switchboard!.call(m, i) : httpCall);
/** In the desktop window (IPC to main, native notifications), not a browser tab. */
export const isDesktop = window.switchboard !== undefined;
/** Live events, and the connection's state and reconnects (events were missed) for a browser. */
export const subscribe: (listener: (event: ConsoleEvent) => void, hooks?: StreamHooks) => () => void = window.switchboard ? ipcEvents : httpEvents;

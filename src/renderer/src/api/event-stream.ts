/** Splits a server-sent event stream into the `data:` payloads of its events. */
export function createSseParser(onData: (data: string) => void): (chunk: string) => void {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    for (;;) {
      const end = /\r?\n\r?\n/.exec(buffer);
      if (!end) return;
      const block = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      const data = block
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
      if (data.length) onData(data.join('\n'));
    }
  };
}

export interface EventStreamOptions {
  url: string;
  /** The headers of each (re)connection; null when there is no token to send. */
  headers: () => Record<string, string> | null;
  onData: (data: string) => void;
  /** 401, or no token: reconnecting would not help. */
  onUnauthorized: () => void;
  /** Connected again after a drop: events in between were missed. */
  onReconnect: () => void;
  /** The stream's state as the operator sees it; `since` is when it was last live (drops) or connected. */
  onState?: (state: StreamState, since: number) => void;
  /**
   * The server writes something (an event or a ping comment) at least this often; a connection
   * silent for longer is dead (a hung service, a half-open TCP connection) and is dropped and made
   * again. Read at each connection.
   */
  silenceMs?: () => number;
  /** The longest wait between reconnects (MAX_DELAY_MS unless a test shortens it). */
  maxDelayMs?: () => number;
}

/**
 * connecting: before the first connection; live: connected; reconnecting: dropped less than
 * OFFLINE_AFTER_MS ago and trying again; offline: dropped longer ago than that.
 */
export type StreamState = 'connecting' | 'live' | 'reconnecting' | 'offline';

/** A drop shorter than this (a restart, a blip) says "reconnecting"; longer says "offline since". */
export const OFFLINE_AFTER_MS = 5_000;

export interface EventStream {
  close(): void;
  /** Try again now instead of waiting out the back-off (the operator asked, or the network is back). */
  wake(): void;
}

const FIRST_DELAY_MS = 500;
export const MAX_DELAY_MS = 15_000;

/**
 * A server-sent event reader over fetch, because EventSource cannot send an Authorization
 * header. Reconnects after a failure or a drop, waiting twice as long each time (at most 15 s).
 * A stopped service keeps its TCP connections open and says nothing: only silence tells.
 */
export function openEventStream(options: EventStreamOptions): EventStream {
  const controller = new AbortController();
  let delay = FIRST_DELAY_MS;
  let wakeUp: (() => void) | null = null;
  let offlineTimer: ReturnType<typeof setTimeout> | null = null;
  const report = (state: StreamState, since: number): void => options.onState?.(state, since);
  const dropped = (): void => {
    if (offlineTimer !== null) return; // already counting from the first failure
    const at = Date.now();
    report('reconnecting', at);
    offlineTimer = setTimeout(() => report('offline', at), OFFLINE_AFTER_MS);
  };
  const connected = (): void => {
    if (offlineTimer !== null) clearTimeout(offlineTimer);
    offlineTimer = null;
    report('live', Date.now());
  };
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const stop = (): void => {
        clearTimeout(timer);
        controller.signal.removeEventListener('abort', stop);
        wakeUp = null;
        resolve();
      };
      const timer = setTimeout(stop, ms);
      wakeUp = stop;
      controller.signal.addEventListener('abort', stop, { once: true });
    });
  const onOnline = (): void => wakeUp?.();
  window.addEventListener('online', onOnline);

  async function run(): Promise<void> {
    for (let attempt = 0; !controller.signal.aborted; attempt++) {
      const headers = options.headers();
      if (!headers) return options.onUnauthorized();
      // One connection's own abort: the watchdog ends it when it goes silent, close() ends them all.
      const connection = new AbortController();
      const endConnection = (): void => connection.abort();
      controller.signal.addEventListener('abort', endConnection, { once: true });
      const silenceMs = options.silenceMs?.() ?? 0;
      let watchdog: ReturnType<typeof setTimeout> | null = null;
      const heard = (): void => {
        if (watchdog !== null) clearTimeout(watchdog);
        if (silenceMs > 0) watchdog = setTimeout(endConnection, silenceMs);
      };
      heard(); // the answer's headers count too: a service that accepts and never answers is as gone
      try {
        const res = await fetch(options.url, { headers: { ...headers, accept: 'text/event-stream' }, cache: 'no-store', signal: connection.signal });
        if (res.status === 401) return options.onUnauthorized();
        if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
        heard();
        delay = FIRST_DELAY_MS;
        connected();
        if (attempt > 0) options.onReconnect();
        const parse = createSseParser(options.onData);
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          heard();
          parse(decoder.decode(value, { stream: true }));
        }
      } catch {
        // A refused connection, a dropped stream or a silent one: wait, then try again.
      } finally {
        if (watchdog !== null) clearTimeout(watchdog);
        controller.signal.removeEventListener('abort', endConnection);
      }
      if (controller.signal.aborted) return;
      dropped();
      await wait(delay);
      delay = Math.min(delay * 2, options.maxDelayMs?.() ?? MAX_DELAY_MS);
    }
  }

  report('connecting', Date.now());
  void run();
  return {
    close() {
      if (offlineTimer !== null) clearTimeout(offlineTimer);
      window.removeEventListener('online', onOnline);
      controller.abort();
    },
    wake: () => wakeUp?.(),
  };
}

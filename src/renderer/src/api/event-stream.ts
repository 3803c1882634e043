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
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 15_000;

/**
 * A server-sent event reader over fetch, because EventSource cannot send an Authorization
 * header. Reconnects after a failure or a drop, waiting twice as long each time (at most 15 s).
 */
export function openEventStream(options: EventStreamOptions): () => void {
  const controller = new AbortController();
  let delay = FIRST_DELAY_MS;
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const stop = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        controller.signal.removeEventListener('abort', stop);
        resolve();
      }, ms);
      controller.signal.addEventListener('abort', stop, { once: true });
    });

  async function run(): Promise<void> {
    for (let attempt = 0; !controller.signal.aborted; attempt++) {
      const headers = options.headers();
      if (!headers) return options.onUnauthorized();
      try {
        const res = await fetch(options.url, { headers: { ...headers, accept: 'text/event-stream' }, cache: 'no-store', signal: controller.signal });
        if (res.status === 401) return options.onUnauthorized();
        if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
        delay = FIRST_DELAY_MS;
        if (attempt > 0) options.onReconnect();
        const parse = createSseParser(options.onData);
        const decoder = new TextDecoder();
        const reader = res.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parse(decoder.decode(value, { stream: true }));
        }
      } catch {
        // A refused connection or a dropped stream: wait, then try again.
      }
      if (controller.signal.aborted) return;
      await wait(delay);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }

  void run();
  return () => controller.abort();
}

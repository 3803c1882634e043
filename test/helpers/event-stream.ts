import type { ConsoleEvent } from '../../src/shared/console-api.ts';

/**
 * Reads a console event stream (`GET /api/events`, server-sent events) as the browser console
 * does, into `events`; `onEvents` runs after each batch. Resolves when the stream ends.
 */
export async function readEventStream(res: Response, events: ConsoleEvent[], onEvents: () => void = () => {}): Promise<void> {
  const reader = res.body!.getReader();
  let buffer = '';
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const cut = buffer.lastIndexOf('\n\n');
    if (cut < 0) continue;
    for (const m of buffer.slice(0, cut).matchAll(/^data: (.*)$/gm)) events.push(JSON.parse(m[1]!) as ConsoleEvent);
    buffer = buffer.slice(cut + 2);
    onEvents();
  }
}

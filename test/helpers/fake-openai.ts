import { createServer, type IncomingHttpHeaders } from 'node:http';
import { answerLater, type CannedAnswer } from './canned-answer.ts';
import type { AddressInfo } from 'node:net';

export interface ChatCall {
  headers: IncomingHttpHeaders;
  body: { model: string; messages: Array<{ role: string; content: string }>; temperature: number; max_tokens: number };
}

export type ChatResponder = (call: ChatCall, index: number) => CannedAnswer;

/** A local OpenAI-compatible chat-completions server the tests script. */
export async function startFakeOpenAi() {
  const calls: ChatCall[] = [];
  const state: { respond: ChatResponder } = { respond: () => ({ body: { choices: [{ message: { role: 'assistant', content: 'Hello from the model.' } }] } }) };
  // Pending delayed answers: a "hung" model is a long delay, cleared on close so nothing lingers.
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const call: ChatCall = { headers: req.headers, body: JSON.parse(text) as ChatCall['body'] };
      calls.push(call);
      answerLater(res, state.respond(call, calls.length - 1), timers);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    set respond(fn: ChatResponder) {
      state.respond = fn;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

import { z } from 'zod';
import type { StoreContract } from '../store/contract.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ConsoleOutputs } from '../../shared/console-api.ts';
import { canonicalJson } from '../auth/canonical-json.ts';
import { hmacKey, sign, signingString } from '../auth/signature.ts';
import { newId } from '../store/ids.ts';
import { ConsoleError } from './console-error.ts';

export interface TestMessageDeps {
  store: Pick<StoreContract, 'clients' | 'console'>;
  box: SecretBox;
  clock: Clock;
  /** The running endpoint's URL. */
  endpoint: string;
}

/** Who the test message comes from: one web conversation per client, easy to recognise. */
export const TEST_VISITOR = 'switchboard-console-test';
/** Who resolves a test message that was handed off (the audit names it). */
export const TEST_RESOLVER = { id: 'switchboard', name: 'Console test message' };

/**
 * First run's "send a test message": a website_dialog signed with the client's newest active
 * secret and POSTed over real HTTP to the running endpoint, exactly as an integrator would, so
 * what comes back is what an integrator sees. The secret is opened here and used for the HMAC
 * only: it is never returned or logged.
 */
export async function sendTestMessage(deps: TestMessageDeps, clientId: string, content: string): Promise<ConsoleOutputs['sendTestMessage']> {
  const client = await deps.store.clients.get(clientId);
  if (!client) throw new ConsoleError('not_found', `no client "${clientId}"`);
  if (!client.enabled) throw new ConsoleError('client_disabled', `client "${clientId}" is disabled; enable it first`);
  const newest = (await deps.store.clients.activeSecrets(clientId))[0];
  if (!newest) throw new ConsoleError('no_secret', `client "${clientId}" has no active secret; rotate it to make one`);
  let key;
  try {
    key = hmacKey(deps.box.open(newest.sealed));
  } catch {
    throw new ConsoleError('secret_unusable', `the secret of client "${clientId}" cannot be opened here (sealed on another machine?); rotate it`);
  }
  const info = { event_type: 'website_dialog', msg_id: newId('message'), from_user_id: TEST_VISITOR, content };
  const timestamp = Math.floor(deps.clock.now() / 1000);
  const signature = sign(key, signingString(timestamp, clientId, canonicalJson(info)));
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(deps.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client: clientId, timestamp, signature, message_info: info }),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    throw new ConsoleError('unreachable', `cannot reach the endpoint ${deps.endpoint}: ${(error as Error).message}`);
  }
  const text = await res.text();
  const latencyMs = Math.round((performance.now() - started) * 10) / 10;
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // Not JSON: shown as the text it is.
  }
  const fromBody = typeof body === 'object' && body !== null ? (body as { request_id?: unknown }).request_id : undefined;
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!CONNECTION_HEADERS.has(name)) headers[name] = value;
  });
  return {
    endpoint: deps.endpoint,
    status: res.status,
    requestId: res.headers.get('x-request-id') ?? (typeof fromBody === 'string' ? fromBody : null),
    latencyMs,
    headers,
    body,
    sent: info,
    answer: res.status === 200 ? await answerOf(deps.store, body) : null,
  };
}

/** Transport details that say nothing about the answer. */
const CONNECTION_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/**
 * How the reply came about (engine, handoff cause, knowledge-base sources), which the response body
 * does not carry: the console turns it into one line ("handed off: no knowledge-base entry matched").
 */
async function answerOf(store: Pick<StoreContract, 'console'>, body: unknown): Promise<ConsoleOutputs['sendTestMessage']['answer']> {
  const parsed = answeredSchema.safeParse(body);
  if (!parsed.success) return null;
  const { conversation_id: conversationId, reply } = parsed.data;
  const entry = (await store.console.transcript(conversationId, 20)).findLast((e) => e.kind === 'reply' && e.msgId === reply.msg_id);
  if (!entry) return null;
  return { handoff: entry.handoff ?? reply.handoff, engine: entry.engine ?? null, cause: entry.cause ?? null, confidence: entry.confidence ?? null, sources: entry.sources ?? [] };
}

const answeredSchema = z.object({ conversation_id: z.string(), reply: z.object({ msg_id: z.string(), handoff: z.boolean() }) });

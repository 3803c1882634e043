import { Agent } from 'node:http';
import { fmt } from '../lib.ts';
import { postJson, signBody } from './honest.ts';
import type { Serve } from './serve.ts';

/**
 * What attack 5 costs its own conversation: two small customer messages sent into it, each once
 * the other's auto reply has arrived (the client has no quiet period, so the reply is composed at
 * once, from the conversation's context: the stuffed messages once they are in), then the
 * console's transcript of it as the console asks for it (50 entries). Run before the stuffing and
 * after it: four replies in all, within the 6 a conversation may get in a minute.
 */
export async function probeConversation(serve: Serve, secret: string, tag: string, content: (n: number) => string, arrivals: Map<string, number>) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(serve.endpoint);
  const requests: number[] = [];
  const replies: number[] = [];
  let conversationId = '';
  const reasons = new Set<string>();
  for (let i = 0; i < 2; i++) {
    const msgId = `probe-${tag}-${i}`;
    const info = { event_type: 'auto_dialog', msg_id: msgId, from_user_id: 'victim', from_user_nickname: 'Victim', from_user_type: 2, content: content(i), create_timestamp: Math.floor(Date.now() / 1000) };
    const t0 = performance.now();
    const a = await postJson(url, signBody('stuffer', secret, info), agent, 120_000);
    requests.push(a.endedAt - t0);
    if (a.status !== 200) {
      reasons.add(`HTTP ${a.status}${a.error ? ` ${a.error}` : ''}`);
      continue;
    }
    const answer = JSON.parse(a.body) as { conversation_id: string; reply?: { reason?: string } };
    conversationId = answer.conversation_id;
    reasons.add(answer.reply?.reason ?? '?');
    const deadline = performance.now() + 90_000;
    while (!arrivals.has(msgId) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (arrivals.has(msgId)) replies.push(arrivals.get(msgId)! - a.endedAt);
  }
  agent.destroy();
  const transcript: Array<{ ms: number; bytes: number; status: number }> = [];
  for (let i = 0; i < 3 && conversationId; i++) {
    try {
      transcript.push(await serve.consoleCall('getTranscript', { conversationId, limit: 50 }));
    } catch {
      transcript.push({ ms: NaN, bytes: NaN, status: 0 });
    }
  }
  const mid = transcript.sort((a, b) => a.ms - b.ms)[1];
  const replyMs = replies.length === 2 ? Math.max(...replies) : NaN;
  return {
    messages: requests.map((t) => fmt(t)).join(' and '),
    replyMs,
    reply: replies.length ? `${replies.map((t) => fmt(t)).join(' and ')} ms` : `no reply within 90 s (${[...reasons].join(', ')})`,
    transcript: mid ? `${fmt(mid.ms)} ms, ${fmt(mid.bytes / 1e6, 2)} MB (HTTP ${mid.status})` : 'not fetched (no conversation)',
  };
}

/** Of the rows the console lists first for client honest (its default 200), how many are 2xx: the client's own verified requests. */
export async function verifiedListed(serve: Serve): Promise<{ ok: number; rows: number } | null> {
  try {
    const r = await serve.consoleCall('listRequests', { clientId: 'honest', limit: 200 });
    const rows = (r.body as { ok: boolean; value?: Array<{ status: number }> }).value;
    return rows ? { ok: rows.filter((x) => x.status < 300).length, rows: rows.length } : null;
  } catch {
    return null;
  }
}

import type { StoreContract } from '../store/contract.ts';
import { DELIVERY_STATES, type DeliveryState } from '../store/deliveries.ts';
import { UsageError } from './args.ts';

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * `deliveries list [--state S] [--limit N]`, `deliveries show ID`, `deliveries retry ID`, on either
 * store. A retried delivery is pending again: a running node's delivery lane takes it (on
 * PostgreSQL, whichever node leases it first).
 */
export async function deliveriesCommand(store: Pick<StoreContract, 'deliveries'>, now: number, args: string[], flags: { state?: string; limit?: string }): Promise<string> {
  const [action, idArg] = args;
  const id = (): number => {
    if (!idArg || !/^\d+$/.test(idArg)) throw new UsageError('a delivery ID (a number from "deliveries list") is required');
    return Number(idArg);
  };
  switch (action) {
    case 'list': {
      if (flags.state !== undefined && !(DELIVERY_STATES as readonly string[]).includes(flags.state)) {
        throw new UsageError(`--state must be one of ${DELIVERY_STATES.join(', ')}, got "${flags.state}"`);
      }
      const limit = flags.limit === undefined ? 50 : Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number, got "${flags.limit}"`);
      const rows = await store.deliveries.list(flags.state as DeliveryState | undefined, limit);
      if (rows.length === 0) return `no ${flags.state ?? ''} deliveries`.replace('  ', ' ');
      return table(
        ['ID', 'STATE', 'ATTEMPTS', 'LAST', 'NEXT', 'REPLY', 'SEND_URL'],
        rows.map((d) => [
          String(d.id),
          d.state,
          String(d.attempts),
          d.lastError ?? (d.lastStatus === null ? '-' : String(d.lastStatus)),
          d.state === 'pending' ? iso(d.nextAttemptAt) : '-',
          d.replyMsgId,
          d.sendUrl,
        ]),
      );
    }
    case 'show': {
      const d = await store.deliveries.get(id());
      if (!d) throw new UsageError(`no delivery ${idArg}`);
      const attempts = await store.deliveries.attempts(d.id);
      return [
        `delivery ${d.id}: ${d.state}, ${d.attempts} attempt(s), reply ${d.replyMsgId} in conversation ${d.conversationId}`,
        `send_url: ${d.sendUrl}`,
        ...(d.state === 'pending' ? [`next attempt: ${iso(d.nextAttemptAt)}`] : []),
        attempts.length
          ? table(['#', 'STARTED', 'MS', 'STATUS', 'OUTCOME', 'ERROR'], attempts.map((a) => [String(a.attempt), iso(a.startedAt), a.durationMs.toFixed(1), a.status === null ? '-' : String(a.status), a.outcome, a.error ?? '']))
          : 'no attempts yet',
      ].join('\n');
    }
    case 'retry': {
      const d = await store.deliveries.get(id());
      if (!d) throw new UsageError(`no delivery ${idArg}`);
      if (!(await store.deliveries.retry(d.id, now))) throw new UsageError(`delivery ${d.id} is ${d.state}; only dead deliveries can be retried`);
      return `delivery ${d.id} queued again with a fresh retry schedule; a running server sends it within a second`;
    }
    default:
      throw new UsageError(`unknown deliveries command "${action ?? ''}"; use list, show or retry`);
  }
}

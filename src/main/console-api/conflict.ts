import type { ArrivedEntry } from '../../shared/console-team.ts';

/** conversation_changed's message, in the service's words (the console words it in its own language from `arrived`). */
export function conflictMessage(arrived: readonly ArrivedEntry[], what: 'reply' | 'note'): string {
  const customers = arrived.filter((a) => a.role === 'customer').length;
  const staff = arrived.length - customers;
  const parts = [customers ? `${customers} customer message${customers === 1 ? '' : 's'}` : null, staff ? `${staff} ${staff === 1 ? 'reply' : 'replies'} from staff` : null].filter(Boolean);
  return `the conversation changed since you started this ${what} (${parts.join(' and ')}); nothing was sent: read what arrived, then send again or send anyway`;
}

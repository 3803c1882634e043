import type { TFunction } from 'i18next';
import type { QuotedLine, TranscriptEntry } from '../../../shared/console-api.ts';

/**
 * What a quoted message (message_type 2) quotes, as a chat app shows it above the reply: who said
 * it and what. The quote's own text when the integrator sent it, else the message as Switchboard
 * stored it; only a message Switchboard never saw is left as its msg_id.
 */
export function Quote({ quote, quoted, t }: { quote: { content?: unknown; msg_id?: unknown }; quoted: QuotedLine | null; t: TFunction }) {
  const own = typeof quote.content === 'string' && quote.content.trim() !== '' ? quote.content : null;
  const text = own ?? quoted?.content ?? null;
  const who = quoted ? (quoted.speakerName ?? (quoted.role === 'ai' ? t('transcript.role.ai') : quoted.speaker)) : null;
  return (
    <blockquote data-testid="quote" title={typeof quote.msg_id === 'string' ? `msg_id ${quote.msg_id}` : undefined}>
      {who && <cite>{who}</cite>}
      {text ?? <em>{t('transcript.quoteMissing', { id: String(quote.msg_id ?? '') })}</em>}
    </blockquote>
  );
}

/** Who a group message @-mentions, by the names the integrator sent; the id on hover. */
export function Mentions({ mentions }: { mentions: NonNullable<TranscriptEntry['mentions']> }) {
  return (
    <div className="mentions" data-testid="mentions">
      {mentions.map((m) => (
        <span key={m.id} className="mention" title={m.id}>
          @{m.name ?? m.id}
        </span>
      ))}
    </div>
  );
}

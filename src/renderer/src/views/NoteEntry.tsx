import type { TFunction } from 'i18next';
import type { TranscriptEntry } from '../../../shared/console-api.ts';
import { fullTime, shortTime } from '../format.ts';
import { Avatar } from './Avatar.tsx';

/**
 * A private note in the transcript: marked as such in words and look (a dashed, tinted card with
 * its own label), so it is never taken for something the customer received.
 */
export function NoteEntry({ e, t, lang }: { e: TranscriptEntry; t: TFunction; lang: string }) {
  const name = e.speakerName ?? e.speaker ?? '?';
  return (
    <li className="entry note" data-entry={e.msgId} data-testid="note-entry">
      <Avatar id={`op:${e.speaker ?? ''}`} name={name} />
      <div className="bubble">
        <div className="meta">
          <span className="note-label">{t('team.note.entry')}</span>
          <strong className="who ellipsis" title={e.speaker ?? undefined}>
            {name}
          </strong>
          <time dateTime={new Date(e.at).toISOString()} title={fullTime(e.at, lang)}>
            {shortTime(e.at, lang)}
          </time>
        </div>
        <div className="content">{e.content}</div>
        {e.mentions && e.mentions.length > 0 && (
          <div className="note-mentions">
            {e.mentions.map((m) => (
              <span key={m.id} className="mention" title={`@${m.id}`}>
                @{m.name ?? m.id}
              </span>
            ))}
          </div>
        )}
      </div>
    </li>
  );
}

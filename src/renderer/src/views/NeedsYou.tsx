import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { askedOf } from './command-text.ts';
import { Avatar } from './Avatar.tsx';
import { conversationTitle, refBeside, titleHover } from '../../../shared/console-display.ts';
import { duration, useNow } from './relative-time.tsx';
import { fullTime } from '../format.ts';
import { RowAssignee } from './ListTeam.tsx';

/** Conversations waiting for a human, longest wait first: the operator's queue. */
export function NeedsYou() {
  const { t, i18n } = useTranslation();
  const items = useConsole((s) => s.needsYou);
  const loaded = useConsole((s) => s.needsYouLoaded);
  const more = useConsole((s) => s.needsYouCursor !== null);
  const loadMore = useConsole((s) => s.loadMoreNeedsYou);
  const open = useConsole((s) => s.openConversation);
  const now = useNow(15_000);
  // A website visitor can be answered only at the client's default send_url: the queue says which cannot be, before they are opened.
  const clients = useConsole((s) => s.clients);
  const loadClients = useConsole((s) => s.loadClients);
  useEffect(() => void loadClients(), [loadClients]);
  const unreachable = (clientId: string): boolean => {
    const client = clients.find((c) => c.id === clientId);
    return client !== undefined && !client.settings['sendUrl'];
  };
  return (
    <section className="admin needs-you" aria-labelledby="needs-you-title">
      <header className="view-head">
        <h2 id="needs-you-title">{t('views.needsYou.title')}</h2>
        <p className="muted">{t('views.needsYou.intro')}</p>
      </header>
      {loaded && items.length === 0 ? (
        <p className="empty">{t('views.needsYou.empty')}</p>
      ) : (
        <ol className="queue" data-testid="needs-you">
          {items.map((c) => {
            const since = c.needsHumanSince ?? c.lastMessageAt;
            const name = conversationTitle(c);
            const ref = refBeside(c);
            return (
              <li key={c.id}>
                <button className="queue-row" onClick={() => open(c.id)} data-conversation={c.id}>
                  <Avatar id={c.customerId ?? c.groupId ?? c.peer} name={name} />
                  <span className="peer" title={titleHover(c)}>
                    {name}
                    <small>
                      {ref ? ` ${ref}` : ''} · {c.clientId} · {t(`list.channel.${c.channel}`)}
                    </small>
                  </span>
                  <time className="waited" dateTime={new Date(since).toISOString()} title={t('views.needsYou.since', { time: fullTime(since, i18n.language) })}>
                    {t('views.needsYou.waiting', { duration: duration(t, now - since) })}
                  </time>
                  {/* What the customer wants, not the bot's fallback, a reply that never arrived or a console action; a flag's line (with its note) says it best. */}
                  <span className="last" data-testid="queue-last">{askedOf(t, c)}</span>
                  <span className="badges">
                    <RowAssignee id={c.assignee ?? null} />
                    {c.needsHumanReason && (
                      <span className={`badge reason ${c.needsHumanReason === 'delivery_failed' ? 'stopped' : 'warn'}`} data-testid="queue-reason">
                        {t(`views.needsYou.reason.${c.needsHumanReason}`)}
                      </span>
                    )}
                    {c.channel === 'web' && unreachable(c.clientId) && (
                      <span className="badge muted" data-testid="no-send-tag" title={t('work.noSend.tagWhy', { client: c.clientId })}>
                        {t('work.noSend.tag')}
                      </span>
                    )}
                    {c.unread > 0 && (
                      <span className="badge unread">
                        <span aria-hidden="true">{c.unread}</span>
                        <span className="sr-only">{t('views.list.unread', { count: c.unread })}</span>
                      </span>
                    )}
                  </span>
                </button>
              </li>
            );
          })}
        </ol>
      )}
      {more && (
        <button className="mini" onClick={() => void loadMore()} data-testid="needs-you-more">
          {t('views.needsYou.more')}
        </button>
      )}
    </section>
  );
}

import { useEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { CONVERSATION_FILTERS, type ConversationSummary } from '../../../shared/console-api.ts';

function stateOf(c: ConversationSummary, now: number): string {
  if (c.autoReply === 'paused' && c.pausedUntil !== null && c.pausedUntil <= now) return 'active';
  return c.autoReply;
}

export function ConversationList({ searchRef }: { searchRef: React.RefObject<HTMLInputElement | null> }) {
  const { t } = useTranslation();
  const conversations = useConsole((s) => s.conversations);
  const loaded = useConsole((s) => s.loaded);
  const filter = useConsole((s) => s.filter);
  const selectedId = useConsole((s) => s.selectedId);
  const setFilter = useConsole((s) => s.setFilter);
  const select = useConsole((s) => s.select);
  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({ count: conversations.length, getScrollElement: () => scroller.current, estimateSize: () => 64, overscan: 8 });
  const now = Date.now();
  const clients = useConsole((s) => s.clients);
  const loadClients = useConsole((s) => s.loadClients);
  useEffect(() => void loadClients(), [loadClients]);
  const filtered = filter.state !== undefined || filter.channel !== undefined || filter.clientId !== undefined || filter.search !== '';

  return (
    <section className="list" aria-label={t('nav.conversations')}>
      <div className="filters">
        <input
          ref={searchRef}
          type="search"
          placeholder={t('list.search')}
          value={filter.search}
          onChange={(e) => setFilter({ search: e.target.value })}
          aria-label={t('list.search')}
        />
        <div className="chips" role="group">
          <button className={filter.state === undefined ? 'chip on' : 'chip'} onClick={() => setFilter({ state: undefined })}>
            {t('list.all')}
          </button>
          {CONVERSATION_FILTERS.map((f) => (
            <button key={f} className={filter.state === f ? 'chip on' : 'chip'} onClick={() => setFilter({ state: filter.state === f ? undefined : f })}>
              {t(`list.state.${f}`)}
            </button>
          ))}
          {clients.length > 0 && (
            <select aria-label={t('list.client')} value={filter.clientId ?? ''} onChange={(e) => setFilter({ clientId: e.target.value || undefined })}>
              <option value="">{t('list.allClients')}</option>
              {clients.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.id}
                </option>
              ))}
            </select>
          )}
          {(['im', 'web'] as const).map((c) => (
            <button key={c} className={filter.channel === c ? 'chip on' : 'chip'} onClick={() => setFilter({ channel: filter.channel === c ? undefined : c })}>
              {t(`list.channel.${c}`)}
            </button>
          ))}
        </div>
      </div>
      <div className="scroller" ref={scroller} data-testid="conversation-list">
        {loaded && conversations.length === 0 && <p className="empty">{filtered ? t('list.noMatch') : t('list.empty')}</p>}
        <div style={{ height: rows.getTotalSize(), position: 'relative' }}>
          {rows.getVirtualItems().map((row) => {
            const c = conversations[row.index]!;
            const state = stateOf(c, now);
            return (
              <button
                key={c.id}
                className={c.id === selectedId ? 'conv selected' : 'conv'}
                style={{ position: 'absolute', top: 0, left: 0, right: 0, height: row.size, transform: `translateY(${row.start}px)` }}
                onClick={() => select(c.id)}
                data-conversation={c.id}
              >
                <span className="peer">
                  {c.groupId ? `# ${c.groupId}` : (c.customerId ?? c.peer)}
                  <small> · {c.clientId} · {t(`list.channel.${c.channel}`)}</small>
                </span>
                <span className="badges">
                  {c.needsHuman && <span className="badge warn">{t('list.state.needs_human')}</span>}
                  {state !== 'active' && <span className={`badge ${state}`}>{t(`list.state.${state}`)}</span>}
                </span>
                <span className="last">{c.lastText ?? ''}</span>
              </button>
            );
          })}
        </div>
      </div>
    </section>
  );
}

import { useEffect, useLayoutEffect, useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { CONVERSATION_FILTERS, type ConversationSummary } from '../../../shared/console-api.ts';
import { effectiveAutoReply } from '../../../shared/conversation.ts';
import { Avatar } from './Avatar.tsx';
import { previewOf } from './command-text.ts';
import { StateBadge } from './StateBadge.tsx';
import { conversationTitle, refBeside, titleHover } from '../../../shared/console-display.ts';
import { useNow, When } from './relative-time.tsx';
import { AssignmentTabs, RowAssignee } from './ListTeam.tsx';
import { RowMark } from './TeamNotices.tsx';
import { RowActivity } from './Activity.tsx';

/** Every row is this tall (the virtual list does not measure them). */
const ROW_HEIGHT = 64;

export function ConversationList({ searchRef }: { searchRef: React.RefObject<HTMLInputElement | null> }) {
  const { t } = useTranslation();
  const conversations = useConsole((s) => s.conversations);
  const loaded = useConsole((s) => s.loaded);
  const filter = useConsole((s) => s.filter);
  const marks = useConsole((s) => s.marks);
  const selectedId = useConsole((s) => s.selectedId);
  const setFilter = useConsole((s) => s.setFilter);
  const select = useConsole((s) => s.select);
  const move = useConsole((s) => s.move);
  const scrollRequest = useConsole((s) => s.scrollRequest);
  const nextCursor = useConsole((s) => s.nextCursor);
  const loadingMore = useConsole((s) => s.loadingMore);
  const loadMore = useConsole((s) => s.loadMore);
  const scroller = useRef<HTMLDivElement>(null);
  const listbox = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({ count: conversations.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_HEIGHT, overscan: 8 });
  // The list's rows say "Paused" until the first of their pauses ends: re-render right then.
  const now = useNow(30_000, firstPauseEnd(conversations, Date.now()));
  const clients = useConsole((s) => s.clients);
  const loadClients = useConsole((s) => s.loadClients);
  useEffect(() => void loadClients(), [loadClients]);
  const filtered = filter.state !== undefined || filter.channel !== undefined || filter.clientId !== undefined || filter.search !== '';
  const tab = useConsole((s) => (s.team.teamMode ? (s.filter.assignment ?? 'all') : 'all'));
  const emptyText = filtered ? t('list.noMatch') : tab === 'mine' ? t('team.list.emptyMine') : tab === 'unassigned' ? t('team.list.emptyUnassigned') : t('list.empty');
  const selectedIndex = conversations.findIndex((c) => c.id === selectedId);

  // The list comes a page at a time: when the rendered window nears the loaded end, ask for the next page.
  const lastRendered = rows.getVirtualItems().at(-1)?.index ?? -1;
  useEffect(() => {
    if (nextCursor !== null && !loadingMore && lastRendered >= conversations.length - 20) void loadMore();
  }, [lastRendered, conversations.length, nextCursor, loadingMore, loadMore]);

  // j/k and the arrow keys move the selection: keep it in view (rows outside the window are not rendered),
  // and keep keyboard focus on it when the list had focus. j/k also ask for a scroll (scrollRequest) so a
  // selection that cannot move further (the list's end) but was pushed out of view by new rows comes back.
  useEffect(() => {
    const index = useConsole.getState().conversations.findIndex((c) => c.id === selectedId);
    if (index < 0) return;
    rows.scrollToIndex(index, { align: 'auto' });
    if (!listbox.current?.contains(document.activeElement)) return;
    requestAnimationFrame(() => listbox.current?.querySelector<HTMLElement>('[aria-selected=true]')?.focus());
    // Only a new selection or a key press scrolls; live reordering of the list must not move the operator's view.
  }, [selectedId, scrollRequest]);

  // Scrolled down the list, the rows in view stay put when conversations arrive or move to the top
  // (at the top, new ones push the list down as they come). Without this a row jumped 64 px under
  // the pointer with each new conversation, and a click landed on its neighbour.
  const anchor = useRef<{ ids: string[]; offset: number } | null>(null);
  const noteAnchor = (): void => {
    const el = scroller.current;
    if (!el) return;
    const list = useConsole.getState().conversations;
    const first = Math.floor(el.scrollTop / ROW_HEIGHT);
    anchor.current = el.scrollTop > 0 ? { ids: list.slice(first, first + 4).map((c) => c.id), offset: el.scrollTop - first * ROW_HEIGHT } : null;
  };
  // A new filter or search is a new list: it keeps no old row in place.
  useLayoutEffect(() => void (anchor.current = null), [filter]);
  useLayoutEffect(() => {
    const el = scroller.current;
    const was = anchor.current;
    if (el && was) {
      // The first row that was in view and is still below the top: a row that moved up had new activity.
      const at = was.ids.map((id) => conversations.findIndex((c) => c.id === id)).find((i) => i > 0);
      if (at !== undefined) {
        const top = at * ROW_HEIGHT + was.offset - was.ids.indexOf(conversations[at]!.id) * ROW_HEIGHT;
        if (Math.abs(el.scrollTop - top) >= 1) el.scrollTop = top;
      }
    }
    noteAnchor();
    // Only a change of the rows re-anchors; scrolling records the new anchor (onScroll).
  }, [conversations]);

  const chip = (on: boolean) => ({ className: on ? 'chip on' : 'chip', 'aria-pressed': on });
  return (
    <section className="list" aria-label={t('nav.conversations')}>
      <div className="filters">
        <AssignmentTabs />
        <input
          ref={searchRef}
          type="search"
          placeholder={t('views.list.search')}
          value={filter.search}
          onChange={(e) => setFilter({ search: e.target.value })}
          aria-label={t('views.list.search')}
          title={t('views.list.searchHint')}
        />
        <div className="chips" role="group" aria-label={t('views.list.filters')}>
          <button {...chip(filter.state === undefined)} onClick={() => setFilter({ state: undefined })}>
            {t('list.all')}
          </button>
          {CONVERSATION_FILTERS.map((f) => (
            <button key={f} {...chip(filter.state === f)} onClick={() => setFilter({ state: filter.state === f ? undefined : f })}>
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
            <button key={c} {...chip(filter.channel === c)} onClick={() => setFilter({ channel: filter.channel === c ? undefined : c })}>
              {t(`list.channel.${c}`)}
            </button>
          ))}
        </div>
      </div>
      <div className="scroller" ref={scroller} data-testid="conversation-list" onScroll={noteAnchor}>
        {loaded && conversations.length === 0 && <p className="empty">{emptyText}</p>}
        {conversations.length > 0 && (
          <div
            ref={listbox}
            role="listbox"
            aria-label={t('views.list.label')}
            aria-busy={loadingMore}
            style={{ height: rows.getTotalSize(), position: 'relative' }}
            onKeyDown={(e) => {
              if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
              e.preventDefault();
              move(e.key === 'ArrowDown' ? 1 : -1);
            }}
          >
            {rows.getVirtualItems().map((row) => {
              const c = conversations[row.index]!;
              const state = effectiveAutoReply(c.autoReply, c.pausedUntil, now);
              const name = conversationTitle(c);
              const ref = refBeside(c);
              const selected = c.id === selectedId;
              // One tab stop for the whole list (the selected row, else the first), arrows move within it.
              const tabbable = selected || (selectedIndex < 0 && row.index === 0);
              return (
                <button
                  key={c.id}
                  role="option"
                  aria-selected={selected}
                  tabIndex={tabbable ? 0 : -1}
                  className={selected ? 'conv selected' : 'conv'}
                  style={{ position: 'absolute', top: 0, left: 0, right: 0, height: row.size, transform: `translateY(${row.start}px)` }}
                  onClick={() => select(c.id)}
                  data-conversation={c.id}
                >
                  <Avatar id={c.customerId ?? c.groupId ?? c.peer} name={name} />
                  {/* The name and ids give way to the badges (ellipsis); the short channel label never does. */}
                  <span className="head">
                    <span className="peer" title={`${titleHover(c)} · ${c.clientId} · ${t(`list.channel.${c.channel}`)}`}>
                      {name}
                      {/* Agents quote the id to colleagues: it stays beside the name the integrator sent. */}
                      {ref && <small> {ref}</small>}
                      <small> · {c.clientId}</small>
                    </span>
                    <small className="channel" data-testid="conversation-channel">
                      {' · '}
                      {t(`list.channel.${c.channel}`)}
                    </small>
                  </span>
                  <When at={c.lastMessageAt} now={now} className="when" />
                  <RowActivity conversationId={c.id}>{previewOf(t, c)}</RowActivity>
                  <span className="badges">
                    <RowMark kind={marks[c.id]} />
                    <RowAssignee id={c.assignee ?? null} />
                    {c.unread > 0 && (
                      <span className="badge unread" title={t('views.list.unread', { count: c.unread })}>
                        <span aria-hidden="true">{c.unread}</span>
                        <span className="sr-only">{t('views.list.unread', { count: c.unread })}</span>
                      </span>
                    )}
                    {c.needsHuman && <span className="badge warn">{t('list.state.needs_human')}</span>}
                    {state !== 'active' && <StateBadge state={state} pausedUntil={c.pausedUntil} />}
                  </span>
                </button>
              );
            })}
          </div>
        )}
      </div>
    </section>
  );
}

/** When the first pause still running among these conversations ends; null when none is. */
function firstPauseEnd(conversations: ConversationSummary[], now: number): number | null {
  let first: number | null = null;
  for (const c of conversations) {
    if (c.autoReply === 'paused' && c.pausedUntil !== null && c.pausedUntil > now && (first === null || c.pausedUntil < first)) first = c.pausedUntil;
  }
  return first;
}

import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { AUDIT_ACTIONS, type AuditAction, type AuditItem } from '../../../shared/console-api.ts';
import { useConsole } from '../store/index.ts';
import { NO_AUDIT_FILTER, type AuditFilter } from '../store/accounts-slice.ts';
import { fullTime, shortTime } from '../format.ts';
import type { TFunction } from 'i18next';
import { conversationTitle } from '../../../shared/console-display.ts';

/**
 * A row's detail as words: its JSON's fields, one `key: value` each, without quotes and braces. An
 * assignment's empty side (`from`/`to` null) is "nobody", not "null".
 */
function detailText(t: TFunction, detail: string | null): string {
  if (detail === null) return '';
  try {
    const parsed = JSON.parse(detail) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return detail;
    return Object.entries(parsed as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${v === null ? t('accounts.audit.nobodyValue') : typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' · ');
  } catch {
    return detail;
  }
}

function Filters() {
  const { t } = useTranslation();
  const applied = useConsole((s) => s.auditFilter);
  const apply = useConsole((s) => s.setAuditFilter);
  const agents = useConsole((s) => s.agents);
  const [draft, setDraft] = useState<AuditFilter>(applied);
  // A choice in a list needs no extra click: it applies at once, with the rest of the form.
  const choose = (patch: Partial<AuditFilter>): void => {
    const next = { ...draft, ...patch };
    setDraft(next);
    apply(next);
  };
  return (
    <form
      className="request-filters audit-filters"
      aria-label={t('accounts.audit.filters')}
      onSubmit={(e) => {
        e.preventDefault();
        apply(draft);
      }}
    >
      <label>
        <span>{t('accounts.audit.agent')}</span>
        <select value={draft.operatorId} onChange={(e) => choose({ operatorId: e.target.value })}>
          <option value="">{t('accounts.audit.everyone')}</option>
          {agents.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name} ({a.id})
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('accounts.audit.action')}</span>
        <select value={draft.action} onChange={(e) => choose({ action: e.target.value as AuditAction | '' })}>
          <option value="">{t('accounts.audit.allActions')}</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {t(`accounts.audit.actions.${a}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>{t('accounts.audit.conversation')}</span>
        <input type="search" value={draft.conversationId} onChange={(e) => setDraft({ ...draft, conversationId: e.target.value })} maxLength={64} />
      </label>
      <button type="submit">{t('accounts.audit.apply')}</button>
      <button type="button" onClick={() => choose(NO_AUDIT_FILTER)} disabled={JSON.stringify(draft) === JSON.stringify(NO_AUDIT_FILTER)}>
        {t('accounts.audit.clear')}
      </button>
    </form>
  );
}

/**
 * Where an action came from when no address was recorded: the owner's desktop window, or the
 * service itself (auto-assignment, an offline agent's conversations going back: no operator).
 * Older rows of an agent have none either.
 */
function noAddress(t: TFunction, item: AuditItem, ownerId: string | null): string {
  if (item.operator.id === '-') return t('accounts.audit.service');
  if (item.operator.id === ownerId) return t('accounts.audit.desktop');
  return '—';
}

function Row({ item }: { item: AuditItem }) {
  const { t, i18n } = useTranslation();
  const open = useConsole((s) => s.openConversation);
  const ownerId = useConsole((s) => s.agents.find((a) => a.owner)?.id ?? (s.me.owner ? (s.operator?.id ?? null) : null));
  // The list's name for it, where the list has it; the id otherwise (and always in the tooltip).
  const listed = useConsole((s) => (item.conversationId ? s.conversations.find((c) => c.id === item.conversationId) : undefined));
  return (
    <tr data-audit={item.id} data-action={item.action}>
      <td>
        <time dateTime={new Date(item.at).toISOString()} title={fullTime(item.at, i18n.language)}>
          {shortTime(item.at, i18n.language)}
        </time>
      </td>
      <td>{item.operator.id === '-' ? t('accounts.audit.nobody') : `${item.operator.name} (${item.operator.id})`}</td>
      <td>{t(`accounts.audit.actions.${item.action}`)}</td>
      <td>
        {item.conversationId && (
          <button type="button" className="link" onClick={() => open(item.conversationId!)} title={item.conversationId} data-testid="audit-conversation">
            {listed ? conversationTitle(listed) : item.conversationId}
          </button>
        )}
      </td>
      <td className="address">{item.address ?? <span className="muted">{noAddress(t, item, ownerId)}</span>}</td>
      <td className="detail">{detailText(t, item.detail)}</td>
    </tr>
  );
}

/** Who did what, from where: filtered by agent, action and conversation (admins only). */
export function AuditLog() {
  const { t } = useTranslation();
  const rows = useConsole((s) => s.audit);
  const load = useConsole((s) => s.loadAudit);
  useEffect(() => void load(), [load]);
  return (
    <div className="requests audit">
      <Filters />
      {rows.length === 0 ? (
        <p className="empty">{t('accounts.audit.empty')}</p>
      ) : (
        <table aria-label={t('accounts.audit.tableLabel')} data-testid="audit-table">
          <thead>
            <tr>
              {(['colTime', 'colWho', 'colAction', 'colConversation', 'colAddress', 'colDetail'] as const).map((c) => (
                <th key={c} scope="col">
                  {t(`accounts.audit.${c}`)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <Row key={r.id} item={r} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

import { useId, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { ClientView } from '../../../shared/console-api.ts';
import { GROUP_POLICIES, type GroupPolicy } from '../../../shared/client-settings.ts';

export interface ReplySettings {
  sendUrl: string | null;
  boundAccount: string | null;
  botIds: string[];
  groupPolicy: GroupPolicy;
  fallbackText: string | null;
}

/** A client's settings as the console API gives them (already parsed, defaults filled in). */
export function replySettingsOf(client: ClientView): ReplySettings {
  const s = client.settings;
  const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  return {
    sendUrl: text(s['sendUrl']),
    boundAccount: text(s['boundAccount']),
    botIds: Array.isArray(s['botIds']) ? s['botIds'].filter((id): id is string => typeof id === 'string') : [],
    groupPolicy: GROUP_POLICIES.find((p) => p === s['groupPolicy']) ?? 'mention',
    fallbackText: text(s['fallbackText']),
  };
}

/** Under policy `mention` with no bound account and no bot ids, no group message can wake the bot. */
export function groupsUnreachable(s: ReplySettings): boolean {
  return s.groupPolicy === 'mention' && !s.boundAccount && s.botIds.length === 0;
}

/**
 * What decides whether and where IM messages are answered: the default send_url, who the bot is
 * in groups, and what happens on a handoff. A bare client answers no group message at all (no
 * bound account, no bot ids, policy `mention`), which no integrator guesses; so it is said here.
 */
export function ReplySettingsSummary({ client, onEdit }: { client: ClientView; onEdit: () => void }) {
  const { t } = useTranslation();
  const titleId = useId();
  const s = replySettingsOf(client);
  const none = (why: string): ReactNode => <span className="muted">{t('integrate.settings.none', { why })}</span>;
  const rows: Array<[string, ReactNode]> = [
    ['sendUrl', s.sendUrl ? <code>{s.sendUrl}</code> : none(t('integrate.settings.noSendUrl'))],
    ['boundAccount', s.boundAccount ? <code>{s.boundAccount}</code> : none(t('integrate.settings.noBoundAccount'))],
    ['botIds', s.botIds.length ? <code>{s.botIds.join(', ')}</code> : none(t('integrate.settings.noBotIds'))],
    [
      'groupPolicy',
      <>
        <code>{s.groupPolicy}</code> <span className="muted">{t(`integrate.settings.policy.${s.groupPolicy}`)}</span>
      </>,
    ],
    ['fallbackText', s.fallbackText ? <span className="clip" title={s.fallbackText}>“{s.fallbackText}”</span> : none(t('integrate.settings.noFallback'))],
  ];
  const deaf = groupsUnreachable(s);
  return (
    <section className="reply-settings" aria-labelledby={titleId} data-testid="reply-settings">
      <div className="row">
        <h3 id={titleId}>{t('integrate.settings.title')}</h3>
        <button type="button" className="mini" onClick={onEdit} data-testid="edit-reply-settings">
          {t('integrate.settings.edit')}
        </button>
      </div>
      <dl>
        {rows.map(([key, value]) => (
          <div key={key} data-setting={key}>
            <dt>{t(`clients.field.${key}`)}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {deaf && (
        <p className="note warn" data-testid="group-warning">
          {t('integrate.settings.groupWarning')}
        </p>
      )}
    </section>
  );
}

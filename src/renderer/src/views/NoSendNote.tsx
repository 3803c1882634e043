import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { ConversationSummary, SendTarget } from '../../../shared/console-api.ts';

/**
 * Why the operator cannot answer here, and what they can do instead (protocol section 8, "Which
 * URL"): a web conversation is answered only at its client's default send_url; an IM one at its
 * latest auto_dialog's send_url, else the default. The agent gets one line: what they can do now.
 * Setting a send_url is an admin's fix (settings, the command line): behind a disclosure, so the
 * agent is not handed a paragraph about `npm run cli` they cannot act on.
 */
export function NoSendNote({ conversation: c, target }: { conversation: ConversationSummary; target: Extract<SendTarget, { ok: false }> }) {
  const { t } = useTranslation();
  const openSettings = useConsole((s) => s.openClientSettings);
  if (target.code === 'no_client') {
    return (
      <div className="no-send" role="note" data-testid="no-send" data-code={target.code}>
        <p>{t('work.noSend.noClient', { client: c.clientId })}</p>
      </div>
    );
  }
  const web = c.channel === 'web';
  // In Needs you the way out is Resolve; otherwise, for a visitor, that the bot still answers them.
  const next = c.needsHuman ? 'work.noSend.elsewhereResolve' : web ? 'work.noSend.webNext' : 'work.noSend.elsewhere';
  return (
    <div className="no-send" role="note" data-testid="no-send" data-code={target.code} aria-labelledby="no-send-title">
      <p data-testid="no-send-line">
        <strong id="no-send-title">{t(web ? 'work.noSend.webTitle' : 'work.noSend.imTitle')}</strong> {t(next)}
      </p>
      <details data-testid="no-send-admin">
        <summary>{t('work.noSend.adminSummary')}</summary>
        <p>{t(web ? 'work.noSend.webWhy' : 'work.noSend.imWhy', { client: c.clientId })}</p>
        <ul>
          <li>
            <button type="button" className="link" onClick={() => openSettings(c.clientId)}>
              {t('work.noSend.setUrl', { client: c.clientId })}
            </button>{' '}
            {t('work.noSend.orRun')}
            <code>npm run cli -- clients set {c.clientId} --send-url URL</code>
            {t('work.noSend.thenAnswer')}
          </li>
          {web && c.needsHuman && <li>{t('work.noSend.webNext')}</li>}
        </ul>
      </details>
    </div>
  );
}

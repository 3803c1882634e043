import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ClientView } from '../../../shared/console-api.ts';
import { DEFAULT_SNIPPET_CONTENT, SECRET_ENV } from '../../../shared/integrate-snippets.ts';
import { useConsole } from '../store/index.ts';
import { IntegrateCode } from './IntegrateCode.tsx';
import { replySettingsOf, ReplySettingsSummary } from './ReplySettingsSummary.tsx';
import { CopyField } from './SecretDialog.tsx';
import { TestMessage } from './TestMessage.tsx';

/** Until the status call answered: the protocol's default address, so the snippets are never empty. */
const DEFAULT_ENDPOINT = 'http://127.0.0.1:8787/custom-im/chat-messages';

/** A wildcard listen address is no address to send to: the integrator needs the machine's own. */
const listensEverywhere = (endpoint: string): boolean => /^https?:\/\/(0\.0\.0\.0|\[::\])[:/]/.test(endpoint);

/**
 * Everything to connect one client: endpoint, client id, its reply settings, ready-to-run code
 * (website chat, IM chat, the receiver of IM replies) and a live test. `secret` is only given right
 * after this console made it (create or rotate); the panel never keeps it anywhere else.
 * `onEditSettings` opens the client's Reply settings.
 */
export function IntegratePanel({ client, secret, onEditSettings }: { client: ClientView; secret: string | null; onEditSettings: () => void }) {
  const { t } = useTranslation();
  const endpoint = useConsole((s) => s.endpoint) ?? DEFAULT_ENDPOINT;
  const [content, setContent] = useState(DEFAULT_SNIPPET_CONTENT);
  const titleId = useId();
  const clearTest = useConsole((s) => s.clearTestMessage);
  useEffect(() => clearTest, [clearTest]);
  const input = { endpoint, clientId: client.id, secret, content: content.trim() || DEFAULT_SNIPPET_CONTENT };
  return (
    <section className="integrate" aria-labelledby={titleId} data-testid="integrate">
      <h2 id={titleId}>{t('integrate.title', { id: client.id })}</h2>
      <p className="muted">{t('integrate.intro')}</p>
      <div className="fields">
        <CopyField label={t('views.secret.endpoint')} value={endpoint} testId="integrate-endpoint" />
        <CopyField label={t('views.secret.clientId')} value={client.id} testId="integrate-client-id" />
        {secret && <CopyField label={t('views.secret.secret')} value={secret} testId="integrate-secret" />}
      </div>
      {listensEverywhere(endpoint) && <p className="note warn">{t('integrate.wildcard')}</p>}
      {secret ? (
        <p className="note" data-testid="secret-note">
          {t('integrate.secretShown')}
        </p>
      ) : (
        <p className="note" data-testid="secret-note">
          {t('integrate.secretHidden', { env: SECRET_ENV })}
        </p>
      )}
      {!client.enabled && <p className="note warn">{t('integrate.disabled')}</p>}
      <ReplySettingsSummary client={client} onEdit={onEditSettings} />
      <h3>{t('integrate.snippets')}</h3>
      <IntegrateCode
        input={input}
        settings={replySettingsOf(client)}
        content={
          <label className="content-field">
            <span>{t('integrate.content')}</span>
            <input value={content} maxLength={2000} onChange={(e) => setContent(e.target.value)} />
          </label>
        }
      />
      <h3>{t('views.start.send')}</h3>
      <p className="muted">{t('integrate.testText')}</p>
      <TestMessage clientId={client.id} content={input.content} />
    </section>
  );
}

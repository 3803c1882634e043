import { useEffect, useRef, useState } from 'react';
import { api } from '../api/bridge.ts';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import type { ClientView } from '../../../shared/console-api.ts';
import { SecretDialog } from './SecretDialog.tsx';
import { IntegratePanel } from './Integrate.tsx';

const FIELDS = [
  ['sendUrl', 'text'],
  ['boundAccount', 'text'],
  // Comma-separated in the form, an array in the settings.
  ['botIds', 'list'],
  ['groupPolicy', 'select'],
  ['pauseMinutes', 'number'],
  ['staleMinutes', 'number'],
  ['quietSeconds', 'number'],
  ['quietMaxSeconds', 'number'],
  ['fallbackText', 'text'],
  ['engine', 'engine'],
  ['mediaOrigins', 'list'],
] as const;

const PLACEHOLDERS: Partial<Record<(typeof FIELDS)[number][0], string>> = { botIds: 'bot-acme, …', mediaOrigins: 'https://cdn.example.com, …' };

const asDraft = (value: unknown): string => (value === undefined ? '' : Array.isArray(value) ? value.join(', ') : String(value));

/** `focusSignal` above 0: a request (the Integrate panel's "Change") to bring the form to the keyboard. */
function SettingsForm({ client, focusSignal }: { client: ClientView; focusSignal: number }) {
  const { t } = useTranslation();
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (focusSignal === 0) return;
    form.current?.scrollIntoView({ block: 'nearest' });
    form.current?.querySelector<HTMLElement>('input, select')?.focus();
  }, [focusSignal]);
  const [engines, setEngines] = useState<Array<{ name: string; model: string | null }>>([{ name: 'kb', model: null }]);
  useEffect(() => {
    void api.listEngines({}).then((r) => r.ok && setEngines(r.value));
  }, []);
  const update = useConsole((s) => s.updateClientSettings);
  const [draft, setDraft] = useState<Record<string, string>>(() =>
    Object.fromEntries(FIELDS.map(([k]) => [k, asDraft(client.settings[k])])),
  );
  const [saved, setSaved] = useState(false);
  return (
    <form
      ref={form}
      className="settings"
      aria-label={t('integrate.settings.formLabel', { id: client.id })}
      onSubmit={(e) => {
        e.preventDefault();
        const patch: Record<string, unknown> = {};
        for (const [k, type] of FIELDS) {
          const value = draft[k] ?? '';
          if (type === 'list') patch[k] = value.split(',').map((v) => v.trim()).filter(Boolean);
          else patch[k] = value === '' ? undefined : type === 'number' ? Number(value) : value;
        }
        void update(client.id, patch).then((ok) => setSaved(ok));
      }}
    >
      {FIELDS.map(([k, type]) => (
        <div key={k} className="field">
          <label>
            <span>{t(`clients.field.${k}`)}</span>
            {type === 'engine' ? (
              <select value={draft[k]} onChange={(e) => setDraft({ ...draft, [k]: e.target.value })} aria-label={t(`clients.field.${k}`)} aria-describedby={`help-${client.id}-${k}`}>
                {engines.map((e) => (
                  <option key={e.name} value={e.name}>
                    {e.name === 'kb' ? t('clients.builtinEngine') : `${e.name} (${e.model ?? ''})`}
                  </option>
                ))}
              </select>
            ) : type === 'select' ? (
              <select value={draft[k]} onChange={(e) => setDraft({ ...draft, [k]: e.target.value })} aria-describedby={`help-${client.id}-${k}`}>
                {['mention', 'all', 'never'].map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
            ) : (
              <input
                type={type === 'list' ? 'text' : type}
                step="any"
                value={draft[k]}
                placeholder={PLACEHOLDERS[k]}
                aria-describedby={`help-${client.id}-${k}`}
                onChange={(e) => (setSaved(false), setDraft({ ...draft, [k]: e.target.value }))}
              />
            )}
          </label>
          {/* What the setting does, which chats it applies to, and what empty means: a grey default alone said none of it. Outside the label, so the field's name stays its name. */}
          <small className="help" id={`help-${client.id}-${k}`}>
            {t(`clients.help.${k}`)}
          </small>
        </div>
      ))}
      <button type="submit">{saved ? t('clients.saved') : t('clients.save')}</button>
    </form>
  );
}

export function Clients() {
  const { t } = useTranslation();
  const clients = useConsole((s) => s.clients);
  const add = useConsole((s) => s.addClient);
  const rotate = useConsole((s) => s.rotateClient);
  const setEnabled = useConsole((s) => s.setClientEnabled);
  const [id, setId] = useState('');
  const [sendUrl, setSendUrl] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const [integrating, setIntegrating] = useState<string | null>(null);
  const [settingsFocus, setSettingsFocus] = useState(0);
  const toggleSettings = (clientId: string) => {
    setSettingsFocus(0);
    setOpen(open === clientId ? null : clientId);
  };
  const editSettings = (clientId: string) => {
    setOpen(clientId);
    setSettingsFocus((n) => n + 1);
  };
  // A secret this console just made (add or rotate): its client's Integrate panel opens with it
  // filled in. Kept in this view's state only, so leaving Clients or closing the panel forgets it.
  const fresh = useConsole((s) => s.freshSecret);
  const [justMade, setJustMade] = useState<{ id: string; secret: string } | null>(null);
  useEffect(() => {
    if (!fresh) return;
    setJustMade(fresh);
    setIntegrating(fresh.id);
  }, [fresh]);
  // Asked from elsewhere (a conversation that cannot be answered for want of a send_url): its form, focused.
  const focus = useConsole((s) => s.clientFocus);
  const clearFocus = useConsole((s) => s.clearClientFocus);
  useEffect(() => {
    if (!focus || !clients.some((c) => c.id === focus)) return;
    editSettings(focus);
    clearFocus();
    // Waits for the clients list: a focus asked for before it arrived goes through once it is in.
  }, [focus, clients, clearFocus]);
  const toggleIntegrate = (clientId: string) => {
    setJustMade(null);
    setIntegrating(integrating === clientId ? null : clientId);
  };
  return (
    <section className="admin" aria-label={t('nav.clients')}>
      <SecretDialog />
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void add(id.trim(), sendUrl.trim() ? { sendUrl: sendUrl.trim() } : {}).then((ok) => ok && (setId(''), setSendUrl('')));
        }}
      >
        <input placeholder={t('clients.id')} value={id} onChange={(e) => setId(e.target.value)} aria-label={t('clients.id')} />
        <input placeholder={t('clients.field.sendUrl')} value={sendUrl} onChange={(e) => setSendUrl(e.target.value)} aria-label={t('clients.field.sendUrl')} />
        <button type="submit" disabled={!id.trim()}>
          {t('clients.add')}
        </button>
      </form>
      {clients.length === 0 ? (
        <p className="empty">{t('clients.empty')}</p>
      ) : (
        <ul className="cards">
          {clients.map((c) => (
            <li key={c.id} data-client={c.id}>
              <div className="row">
                <strong className="clip" title={c.id}>
                  {c.id}
                </strong>
                <span className={`badge ${c.enabled ? 'active' : 'stopped'}`}>{c.enabled ? t('clients.enabled') : t('clients.disabled')}</span>
                <small>{t('clients.secrets', { hints: c.secrets.map((s) => `…${s.hint}`).join(', ') })}</small>
                <button onClick={() => void rotate(c.id)}>{t('clients.rotate')}</button>
                <button onClick={() => void setEnabled(c.id, !c.enabled)}>{c.enabled ? t('clients.disable') : t('clients.enable')}</button>
                <button onClick={() => toggleSettings(c.id)} aria-expanded={open === c.id}>
                  {t('clients.settings')}
                </button>
                <button onClick={() => toggleIntegrate(c.id)} aria-expanded={integrating === c.id} className={integrating === c.id ? 'on' : undefined}>
                  {t('integrate.open')}
                </button>
              </div>
              {open === c.id && <SettingsForm client={c} focusSignal={settingsFocus} />}
              {integrating === c.id && (
                <IntegratePanel client={c} secret={justMade?.id === c.id ? justMade.secret : null} onEditSettings={() => editSettings(c.id)} />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

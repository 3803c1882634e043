import { useEffect, useId, useState, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import type { ApiError } from '../../../shared/console-api.ts';
import type { TeamDialogBridge, TeamServerProbe } from '../../../shared/team-ipc.ts';
import { onSessionProblem, sessionProblem } from '../api/team-session.ts';
import { Modal } from './Modal.tsx';
import './team-server.css';

/**
 * The header's Team server control, desktop only: in the local window it opens "Connect to a team
 * server"; in the window on a team server it switches back to this computer's service. In a
 * browser neither bridge exists and nothing shows.
 */
export function TeamServer() {
  const dialogBridge = window.switchboard?.team;
  if (window.switchboardTeam) return <RemoteControls />;
  if (dialogBridge) return <TeamServerEntry bridge={dialogBridge} />;
  return null;
}

function RemoteControls() {
  const { t } = useTranslation();
  const problem = useSyncExternalStore(onSessionProblem, sessionProblem);
  return (
    <span className="team-remote">
      {problem && (
        <span className="badge warn" title={t('teamServer.notRememberedTitle')} data-testid="team-not-remembered">
          {t('teamServer.notRemembered')}
        </span>
      )}
      <button type="button" onClick={() => void window.switchboardTeam?.useThisComputer()} title={t('teamServer.useThisComputerTitle')} data-testid="team-use-this-computer">
        {t('teamServer.useThisComputer')}
      </button>
    </span>
  );
}

function TeamServerEntry({ bridge }: { bridge: TeamDialogBridge }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  // The menu (or a window that failed to load) asks for the dialog, perhaps with why.
  useEffect(
    () =>
      bridge.onOpenDialog((message) => {
        setNotice(message);
        setOpen(true);
      }),
    [bridge],
  );
  return (
    <>
      <button type="button" onClick={() => setOpen(true)} title={t('teamServer.openTitle')} data-testid="team-server-open">
        {t('teamServer.open')}
      </button>
      {open && (
        <TeamServerDialog
          bridge={bridge}
          notice={notice}
          onClose={() => {
            setOpen(false);
            setNotice(null);
          }}
        />
      )}
    </>
  );
}

type Step = { kind: 'idle' } | { kind: 'busy'; what: 'check' | 'connect' } | { kind: 'checked'; probe: TeamServerProbe } | { kind: 'failed'; error: ApiError; probe: TeamServerProbe | null };

/** URL → the certificate as checked (its fingerprint to confirm when self-signed) → connect. */
export function TeamServerDialog({ bridge, notice, onClose }: { bridge: TeamDialogBridge; notice: string | null; onClose: () => void }) {
  const { t } = useTranslation();
  const [url, setUrl] = useState('');
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [confirmed, setConfirmed] = useState(false);
  const hintId = useId();
  const probe = step.kind === 'checked' ? step.probe : step.kind === 'failed' ? step.probe : null;

  async function check(): Promise<void> {
    setStep({ kind: 'busy', what: 'check' });
    setConfirmed(false);
    const result = await bridge.probe(url);
    setStep(result.ok ? { kind: 'checked', probe: result.value } : { kind: 'failed', error: result.error, probe: null });
  }

  async function connect(p: TeamServerProbe): Promise<void> {
    setStep({ kind: 'busy', what: 'connect' });
    const result = await bridge.connect(url, p.trust === 'unverified' ? p.fingerprint : null);
    // Connected: main shows the team server's window in place of this one.
    if (result.ok) onClose();
    else setStep({ kind: 'failed', error: result.error, probe: p });
  }

  async function forget(): Promise<void> {
    const result = await bridge.forget(url);
    if (result.ok) await check();
    else setStep({ kind: 'failed', error: result.error, probe });
  }

  const busy = step.kind === 'busy';
  const canConnect = probe !== null && step.kind === 'checked' && (probe.trust === 'public' || probe.trust === 'pinned' || (probe.trust === 'unverified' && confirmed));
  return (
    <Modal title={t('teamServer.title')} onClose={onClose} testId="team-server-dialog">
      {notice && (
        <div role="alert" className="form-error" data-testid="team-server-notice">
          <p>{t('teamServer.lastProblem')}</p>
          <p className="detail">{notice}</p>
        </div>
      )}
      <p className="muted">{t('teamServer.intro')}</p>
      <form
        className="team-server-form"
        onSubmit={(e) => {
          e.preventDefault();
          void check();
        }}
      >
        <label>
          {t('teamServer.address')}
          <input type="text" inputMode="url" value={url} onChange={(e) => setUrl(e.target.value)} required maxLength={2048} placeholder="https://" aria-describedby={hintId} data-autofocus spellCheck={false} autoComplete="url" />
        </label>
        <p id={hintId} className="muted hint">
          {t('teamServer.addressHint')}
        </p>
        <div className="row">
          <button type="submit" disabled={busy || !url.trim()}>
            {step.kind === 'busy' && step.what === 'check' ? t('teamServer.checking') : t('teamServer.check')}
          </button>
        </div>
      </form>
      {probe && <CertificateFacts probe={probe} />}
      {probe?.trust === 'unverified' && step.kind === 'checked' && (
        <label className="check">
          <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} data-testid="team-server-confirm" />
          {t('teamServer.confirm')}
        </label>
      )}
      {probe?.trust === 'changed' && (
        <div className="row">
          <button type="button" className="danger" onClick={() => void forget()} aria-describedby={`${hintId}-forget`}>
            {t('teamServer.forget')}
          </button>
          <span id={`${hintId}-forget`} className="muted hint">
            {t('teamServer.forgetHint')}
          </span>
        </div>
      )}
      {step.kind === 'failed' && (
        <div role="alert" className="form-error" data-testid="team-server-error">
          <p>{t(`teamServer.error.${step.error.code}`, { defaultValue: t('teamServer.error.other') })}</p>
          <p className="detail">{step.error.message}</p>
        </div>
      )}
      {probe && probe.trust !== 'changed' && (
        <div className="row">
          <button type="button" className="primary" disabled={!canConnect || busy} onClick={() => void connect(probe)} data-testid="team-server-connect">
            {step.kind === 'busy' && step.what === 'connect' ? t('teamServer.connecting') : t('teamServer.connect')}
          </button>
        </div>
      )}
    </Modal>
  );
}

function CertificateFacts({ probe }: { probe: TeamServerProbe }) {
  const { t } = useTranslation();
  const warn = probe.trust === 'unverified' || probe.trust === 'changed';
  return (
    <section className={warn ? 'team-cert warn' : 'team-cert'} data-testid="team-server-certificate" data-trust={probe.trust}>
      <p role={probe.trust === 'changed' ? 'alert' : undefined}>{t(`teamServer.trust.${probe.trust}`)}</p>
      <dl>
        <dt>{t('teamServer.server')}</dt>
        <dd>{probe.origin}</dd>
        {probe.trust === 'changed' && probe.pinned ? (
          <>
            <dt>{t('teamServer.confirmedBefore')}</dt>
            <dd className="fingerprint">{probe.pinned}</dd>
            <dt>{t('teamServer.nowShows')}</dt>
            <dd className="fingerprint" data-testid="team-server-fingerprint">
              {probe.fingerprint}
            </dd>
          </>
        ) : (
          <>
            <dt>{t('teamServer.fingerprint')}</dt>
            <dd className="fingerprint" data-testid="team-server-fingerprint">
              {probe.fingerprint}
            </dd>
          </>
        )}
        <dt>{t('teamServer.validTo')}</dt>
        <dd>{probe.validTo}</dd>
      </dl>
    </section>
  );
}

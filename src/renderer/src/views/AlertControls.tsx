import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { BellIcon, SpeakerIcon } from './Icons.tsx';

/**
 * The header's alert switches, each an icon and its words: an agent reads what it does without
 * hovering (a bare bell or speaker did not say whether it was on, or what it would do). Desktop notifications in a browser only after the operator clicks
 * "Enable alerts" (the browser asks then, never unasked); the desktop window notifies natively.
 * The sound is the operator's choice everywhere, remembered in this browser.
 */
export function AlertControls() {
  const { t } = useTranslation();
  const permission = useConsole((s) => s.notifyPermission);
  const notify = useConsole((s) => s.notify);
  const enable = useConsole((s) => s.enableAlerts);
  const toggleNotify = useConsole((s) => s.toggleNotify);
  return (
    <span className="alert-controls">
      {permission === 'default' && (
        <button type="button" className="labelled" onClick={() => void enable()} title={t('work.alerts.enable')}>
          <BellIcon />
          <span className="label">{t('work.alerts.enable')}</span>
        </button>
      )}
      {permission === 'granted' && (
        <button type="button" className="toggle labelled" aria-pressed={notify} onClick={toggleNotify} title={t('work.alerts.notify')}>
          <BellIcon />
          <span className="label">{t('work.alerts.notify')}</span>
        </button>
      )}
      {permission === 'denied' && (
        <button type="button" className="labelled" disabled title={`${t('work.alerts.denied')}: ${t('work.alerts.deniedWhy')}`} aria-describedby="alerts-denied">
          <BellIcon />
          <span className="label">{t('work.alerts.denied')}</span>
          <span id="alerts-denied" className="sr-only">
            {t('work.alerts.deniedWhy')}
          </span>
        </button>
      )}
    </span>
  );
}

/** The alert tone on or off: a set-once preference, with the header's others (HeaderPrefs). */
export function SoundToggle() {
  const { t } = useTranslation();
  const sound = useConsole((s) => s.sound);
  const toggleSound = useConsole((s) => s.toggleSound);
  return (
    <button type="button" className="toggle labelled" aria-pressed={sound} onClick={toggleSound} title={t('work.alerts.sound')}>
      <SpeakerIcon />
      <span className="label">{t('work.alerts.sound')}</span>
    </button>
  );
}

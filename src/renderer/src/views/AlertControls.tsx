import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';

/**
 * The header's alert switches. Desktop notifications in a browser only after the operator clicks
 * "Enable alerts" (the browser asks then, never unasked); the desktop window notifies natively.
 * The sound is the operator's choice everywhere, remembered in this browser.
 */
export function AlertControls() {
  const { t } = useTranslation();
  const permission = useConsole((s) => s.notifyPermission);
  const notify = useConsole((s) => s.notify);
  const sound = useConsole((s) => s.sound);
  const enable = useConsole((s) => s.enableAlerts);
  const toggleNotify = useConsole((s) => s.toggleNotify);
  const toggleSound = useConsole((s) => s.toggleSound);
  return (
    <span className="alert-controls">
      {permission === 'default' && (
        <button type="button" onClick={() => void enable()}>
          {t('work.alerts.enable')}
        </button>
      )}
      {permission === 'granted' && (
        <button type="button" className="toggle" aria-pressed={notify} onClick={toggleNotify}>
          {t('work.alerts.notify')}
        </button>
      )}
      {permission === 'denied' && (
        <button type="button" disabled title={t('work.alerts.deniedWhy')} aria-describedby="alerts-denied">
          {t('work.alerts.denied')}
          <span id="alerts-denied" className="sr-only">
            {t('work.alerts.deniedWhy')}
          </span>
        </button>
      )}
      <button type="button" className="toggle" aria-pressed={sound} onClick={toggleSound}>
        {t('work.alerts.sound')}
      </button>
    </span>
  );
}

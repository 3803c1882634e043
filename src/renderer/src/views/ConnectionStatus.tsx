import type { ButtonHTMLAttributes } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { canWrite } from '../store/connection-slice.ts';
import { reconnectNow } from '../api/bridge.ts';
import { clockTime } from '../format.ts';
import { assertNever } from '../../../shared/assert-never.ts';

/** The element that says why writes are off; disabled buttons point at it with aria-describedby. */
export const CONNECTION_REASON_ID = 'connection-reason';

/** Why a write cannot be made right now, or null when it can. */
export function useWriteBlock(): string | null {
  const { t, i18n } = useTranslation();
  const { state, since } = useConsole((s) => s.connection);
  if (canWrite(state)) return null;
  return state === 'offline' ? t('work.connection.blockedOffline', { time: clockTime(since, i18n.language) }) : t('work.connection.blockedReconnecting');
}

/** The header's indicator: live, reconnecting, or offline since a time. */
export function ConnectionStatus() {
  const { t, i18n } = useTranslation();
  const { state, since } = useConsole((s) => s.connection);
  const blocked = useWriteBlock();
  let label: string;
  switch (state) {
    case 'connecting':
      label = t('work.connection.connecting');
      break;
    case 'live':
      label = t('work.connection.live');
      break;
    case 'reconnecting':
      label = t('work.connection.reconnecting');
      break;
    case 'offline':
      label = t('work.connection.offline', { time: clockTime(since, i18n.language) });
      break;
    default:
      assertNever(state, 'connection state');
  }
  return (
    <span className={`connection ${state}`} data-testid="connection" data-state={state} title={label}>
      <span className="dot" aria-hidden="true" />
      <span role="status">
        <span className="full">{label}</span>
        {state === 'offline' && (
          <span className="short" aria-hidden="true">
            {t('work.connection.offlineShort')}
          </span>
        )}
      </span>
      {state === 'offline' && (
        <button type="button" className="mini" onClick={reconnectNow} aria-label={t('work.connection.retryNow')}>
          <span className="label" aria-hidden="true">
            {t('work.connection.retryNow')}
          </span>
          <span className="label-short" aria-hidden="true">
            {t('work.connection.retryShort')}
          </span>
        </button>
      )}
      <span id={CONNECTION_REASON_ID} className="sr-only">
        {blocked ?? ''}
      </span>
    </span>
  );
}

type WriteButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  /** A reason of the action's own (e.g. no stop on a web chat), with the id of the element saying it. */
  notApplicable?: { text: string; id: string } | null;
};

/** A button that writes: off while the service is unreachable or the action does not apply, saying why. */
export function WriteButton({ notApplicable, disabled, title, ...rest }: WriteButtonProps) {
  const blocked = useWriteBlock();
  const reason = notApplicable ? notApplicable.text : blocked;
  const describedBy = notApplicable ? notApplicable.id : blocked ? CONNECTION_REASON_ID : undefined;
  return <button type="button" {...rest} disabled={Boolean(disabled) || reason !== null} title={reason ?? title} aria-describedby={describedBy} />;
}

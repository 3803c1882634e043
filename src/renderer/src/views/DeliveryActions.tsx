import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { WriteButton } from './ConnectionStatus.tsx';
import { Modal } from './Modal.tsx';
import { conversationTitle } from '../../../shared/console-display.ts';

/**
 * Retry (a dead one starts over) or Retry now (a retrying one goes at once), and Cancel: the same
 * pair on a Deliveries row and on a transcript's delivery line; only the retry's word and the
 * layout (`className`) differ.
 */
export function DeliveryActions({ id, retrying, sending, retryLabel, className, who }: { id: number; retrying: boolean; sending: boolean; retryLabel: string; className: string; who?: string }) {
  const { t } = useTranslation();
  const retry = useConsole((s) => s.retryDeliveries);
  return (
    <span className={className}>
      <WriteButton className="mini" disabled={sending} title={retrying ? t('deliveryActions.retryNowWhy') : undefined} onClick={() => void retry([id])}>
        {retrying ? t('deliveryActions.retryNow') : retryLabel}
      </WriteButton>
      <CancelDelivery id={id} disabled={sending} who={who} />
    </span>
  );
}

/** The on-the-wire notice is some 30 words: time to read it. */
const ON_THE_WIRE_NOTICE_MS = 10_000;

/**
 * Cancel a failing delivery: the reply is never sent, and nothing brings it back, so the button
 * asks first (it sits right under Retry) and "Keep it" has the focus.
 */
export function CancelDelivery({ id, disabled, who }: { id: number; disabled: boolean; who?: string }) {
  const { t } = useTranslation();
  // On a transcript's delivery line: the open conversation's name.
  const open = useConsole((s) => (s.transcript ? conversationTitle(s.transcript.conversation) : undefined));
  const cancel = useConsole((s) => s.cancelDelivery);
  const noteKey = useConsole((s) => s.noteKey);
  const [asking, setAsking] = useState(false);
  const whyId = useId();
  return (
    <>
      <WriteButton className="mini" disabled={disabled} title={t('deliveryActions.cancelWhy')} onClick={() => setAsking(true)} aria-haspopup="dialog">
        {t('deliveryActions.cancelDelivery')}
      </WriteButton>
      {asking && (
        <Modal title={t('deliveryActions.confirm.title')} onClose={() => setAsking(false)} testId="cancel-delivery-dialog" describedBy={whyId}>
          <p id={whyId}>{t('deliveryActions.confirm.why')}</p>
          <div className="row">
            <button type="button" onClick={() => setAsking(false)} data-autofocus>
              {t('deliveryActions.confirm.keep')}
            </button>
            <WriteButton
              className="primary"
              onClick={() => {
                setAsking(false);
                void cancel(id, who ?? open).then((r) => {
                  // The Deliveries view says it on its status line; elsewhere (the transcript) the toast area does.
                  if (r?.tryOnTheWire && useConsole.getState().view !== 'deliveries') noteKey(t('deliveryActions.cancelledOnTheWire'), ON_THE_WIRE_NOTICE_MS);
                });
              }}
            >
              {t('deliveryActions.cancelDelivery')}
            </WriteButton>
          </div>
        </Modal>
      )}
    </>
  );
}

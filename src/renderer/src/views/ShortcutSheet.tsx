import { useTranslation } from 'react-i18next';
import { Modal } from './Modal.tsx';

const KEYS = [
  ['j / k', 'move'],
  ['/', 'search'],
  ['a', 'reply'],
  ['Ctrl+Enter', 'send'],
  ['/ …', 'canned'],
  ['s', 'stop'],
  ['r', 'resume'],
  ['e', 'resolve'],
  ['h', 'flag'],
  ['z', 'undo'],
  ['Esc', 'escape'],
  ['?', 'sheet'],
] as const;

/** The `?` sheet: every shortcut, and where it applies. */
export function ShortcutSheet({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Modal title={t('work.keys.title')} onClose={onClose} testId="shortcut-sheet">
      <table className="keys">
        <thead>
          <tr>
            <th scope="col">{t('work.keys.key')}</th>
            <th scope="col">{t('work.keys.action')}</th>
          </tr>
        </thead>
        <tbody>
          {KEYS.map(([key, what]) => (
            <tr key={what}>
              <td>
                <kbd>{key}</kbd>
              </td>
              <td>{t(`work.keys.${what}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">{t('work.keys.note')}</p>
    </Modal>
  );
}

import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { useConsole } from '../store/index.ts';
import { Avatar } from './Avatar.tsx';
import { OperatorBadge } from './Operator.tsx';
import { usePlacedPopover } from './placed-popover.ts';

const MENU_ID = 'account-menu';

/**
 * The header's "who is signed in": an agent's session shows their name and role, with a menu to
 * sign out; the installation's owner (desktop window, the console URL serve printed) keeps the
 * operator badge, where they say who they are.
 */
export function AccountMenu() {
  const { t } = useTranslation();
  const me = useConsole((s) => s.me);
  const loadMe = useConsole((s) => s.loadMe);
  const signOut = useConsole((s) => s.signOut);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  useEffect(() => void loadMe(), [loadMe]);
  usePlacedPopover(menu, button);
  if (me.owner || !me.account) return <OperatorBadge />;
  const role = t(`accounts.role.${me.role}`);
  return (
    <>
      <button type="button" ref={button} className="operator account" popoverTarget={MENU_ID} data-testid="account-menu">
        {/* Named by its words, "Account: Ann Lee, Agent": the menu's own "Sign out" is the only one a screen reader hears. */}
        <Avatar id={`op:${me.account.id}`} name={me.account.name} size="sm" />
        <span className="sr-only">{`${t('accounts.menu.button')} `}</span>
        <span className="ellipsis alt-after" data-alt-after={t('accounts.menu.separator')}>
          {me.account.name}
        </span>
        <span className="badge">{role}</span>
      </button>
      <div id={MENU_ID} ref={menu} popover="auto" className="account-menu">
        <p>{t('accounts.menu.signedInAs', { name: me.account.name, id: me.account.id })}</p>
        <button type="button" onClick={() => void signOut()} data-testid="sign-out">
          {t('accounts.menu.signOut')}
        </button>
      </div>
    </>
  );
}

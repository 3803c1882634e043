import { useTranslation } from 'react-i18next';
import { useConsole, type View } from '../store/index.ts';
import { mayCall } from '../../../shared/console-roles.ts';
import type { ConsoleMethod } from '../../../shared/console-api.ts';

/** The knowledge base's own sections: its entries, what the team taught it, and replays of a change. */
export const KB_SECTIONS = ['kb', 'learn', 'replay'] as const satisfies readonly View[];
export type KbSection = (typeof KB_SECTIONS)[number];

const NEEDS: Record<KbSection, ConsoleMethod> = { kb: 'listKb', learn: 'listProposals', replay: 'startReplay' };

export const isKbSection = (v: View): v is KbSection => (KB_SECTIONS as readonly View[]).includes(v);

/**
 * Tabs above the knowledge base, Learn and Replay: one place in the header for all three keeps the
 * header one row at 1024 px, and they belong together (a proposal approved, then replayed).
 */
export function KbTabs({ view }: { view: KbSection }) {
  const { t } = useTranslation();
  const goTo = useConsole((s) => s.goTo);
  const role = useConsole((s) => s.me.role);
  const proposals = useConsole((s) => (mayCall(s.me.role, 'approveProposals') ? s.pendingProposals : 0));
  const sections = KB_SECTIONS.filter((v) => mayCall(role, NEEDS[v]));
  if (sections.length < 2) return null;
  const label = (v: KbSection): string => (v === 'kb' ? t('kb.entries') : v === 'learn' ? t('learn.nav') : t('replay.nav'));
  return (
    <nav className="subnav" aria-label={t('kb.sections')}>
      {sections.map((v) => (
        <button key={v} className={view === v ? 'on' : ''} aria-current={view === v ? 'page' : undefined} onClick={() => goTo(v)} data-view={v}>
          {label(v)}
          {v === 'learn' && <ProposalCount count={proposals} />}
        </button>
      ))}
    </nav>
  );
}

/** The proposals waiting for an admin, beside a nav entry: a number to see, a sentence to hear. */
export function ProposalCount({ count, testId }: { count: number; testId?: string }) {
  const { t } = useTranslation();
  if (count <= 0) return null;
  return (
    <>
      {' '}
      <span className="nav-count" data-testid={testId} aria-hidden="true">
        {count}
      </span>
      <span className="sr-only">({t('learn.waiting', { count })})</span>
    </>
  );
}

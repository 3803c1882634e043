import type { View } from '../store/index.ts';
import { assertNever } from '../../../shared/assert-never.ts';
import { Agents } from './Agents.tsx';
import { Clients } from './Clients.tsx';
import { Dashboard } from './Dashboard.tsx';
import { Deliveries } from './Deliveries.tsx';
import { FirstRun } from './FirstRun.tsx';
import { KnowledgeBase } from './KnowledgeBase.tsx';
import { KbTabs } from './KbTabs.tsx';
import { Learn } from './Learn.tsx';
import { NeedsYou } from './NeedsYou.tsx';
import { RequestLog } from './RequestLog.tsx';
import { Replay } from './Replay.tsx';

/** Every view but the conversations split (App lays that one out with the transcript). */
export function MainView({ view }: { view: Exclude<View, 'conversations'> }) {
  switch (view) {
    case 'needs_you':
      return <NeedsYou />;
    case 'deliveries':
      return <Deliveries />;
    case 'dashboard':
      return <Dashboard />;
    case 'requests':
      return <RequestLog />;
    case 'clients':
      return <Clients />;
    case 'kb':
      return (
        <>
          <KbTabs view="kb" />
          <KnowledgeBase />
        </>
      );
    case 'start':
      return <FirstRun />;
    case 'agents':
      return <Agents />;
    case 'learn':
      return (
        <>
          <KbTabs view="learn" />
          <Learn />
        </>
      );
    case 'replay':
      return (
        <>
          <KbTabs view="replay" />
          <Replay />
        </>
      );
    default:
      return assertNever(view, 'view');
  }
}

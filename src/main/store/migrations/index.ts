import type { Migration } from '../migrate.ts';
import { migration001 } from './001-initial.ts';
import { migration002 } from './002-knowledge-base.ts';
import { migration003 } from './003-deliveries.ts';
import { migration004 } from './004-engines.ts';
import { migration005 } from './005-request-log-counts.ts';
import { migration006 } from './006-operator-replies.ts';
import { migration007 } from './007-workspace.ts';
import { migration008 } from './008-hot-path-indexes.ts';
import { migration009 } from './009-message-search.ts';
import { migration010 } from './010-auto-message-msg-id.ts';
import { migration011 } from './011-conversation-list-index.ts';
import { migration012 } from './012-stats-rollup.ts';
import { migration013 } from './013-cancelled-deliveries.ts';
import { migration014 } from './014-search-index-queue.ts';
import { migration015 } from './015-audit-flag.ts';
import { migration016 } from './016-audit-cancel.ts';
import { migration017 } from './017-needs-human-reason.ts';
import { migration018 } from './018-held-conversations-index.ts';
import { migration019 } from './019-staff-wait-indexes.ts';
import { migration020 } from './020-search-merge-pacing.ts';
import { migration021 } from './021-display-names.ts';
import { migration022 } from './022-request-log-verified.ts';
import { migration023 } from './023-shown-info.ts';
import { migration024 } from './024-delivery-lanes.ts';
import { migration025 } from './025-accounts.ts';

/** In order; a released migration is never edited, only followed by a new one. */
export const MIGRATIONS: readonly Migration[] = [migration001, migration002, migration003, migration004, migration005, migration006, migration007, migration008, migration009, migration010, migration011, migration012, migration013, migration014, migration015, migration016, migration017, migration018, migration019, migration020, migration021, migration022, migration023, migration024, migration025];

import type { Migration } from '../migrate.ts';
import { addAuditAction } from './audit-actions.ts';

/**
 * The built-in engine's threshold can be set from the console (issue 29: the threshold's plot is
 * where an admin sees the trade-off); each change is audited as `kb_threshold`. The value itself is
 * a row of `settings` (key kbThreshold), so no table changes.
 */
export const migration033: Migration = {
  version: 33,
  name: 'kb-threshold-audit',
  up(db) {
    addAuditAction(db, 'kb_threshold', 33);
  },
};

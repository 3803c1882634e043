import type { Store } from '../store/index.ts';
import type { Keyring } from './secret-box.ts';
import { checkSealed, checkSecrets, type CheckReport } from './key-rotation.ts';

const SHOWN = 5;

/**
 * What serve says at start about the stored secrets and its key. When not one of the values
 * opens, this node has the wrong key (a node started with its own fresh key, a copy of another
 * folder without its key file): it refuses to start rather than answer every signed request with
 * 401. When only some do not open, it starts and names them (those clients' requests are refused).
 */
export function startupKeyCheck(store: Store, ring: Keyring): { warnings: string[]; fatal: string | null } {
  return judge(checkSecrets(store, ring));
}

/** The same check on a PostgreSQL node: the active client secrets and engine keys its mirror holds. */
export function startupKeyCheckOf(values: Iterable<{ label: string; sealed: string }>, ring: Keyring): { warnings: string[]; fatal: string | null } {
  return judge(checkSealed(values, ring));
}

function judge(report: CheckReport): { warnings: string[]; fatal: string | null } {
  const checked = [...report.bySealer.values()].reduce((a, b) => a + b, 0) - report.foreign;
  if (report.failures.length === 0) return { warnings: [], fatal: null };
  const first = report.failures[0]!;
  if (report.failures.length === checked) {
    return { warnings: [], fatal: `none of the ${checked} stored client secrets and engine keys opens with this node's key (${first.label}: ${first.error})` };
  }
  const warnings = report.failures.slice(0, SHOWN).map((f) => `warning: ${f.label} does not open: ${f.error}`);
  if (report.failures.length > SHOWN) warnings.push(`warning: and ${report.failures.length - SHOWN} more that do not open: npm run cli -- secrets check lists them`);
  return { warnings, fatal: null };
}

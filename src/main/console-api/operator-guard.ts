import type { Store } from '../store/index.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import { ConsoleError } from './console-error.ts';

/** Actions that speak or decide for the business name who did it: they wait until the operator is set. */
export function requireOperator(store: Store): Operator {
  const operator = store.settings.operator();
  if (!operator) {
    throw new ConsoleError('operator_required', 'Set who you are first (an operator id and display name): replies, resolves, stop/resume and suggestions are sent and recorded under that name.');
  }
  return operator;
}

import type { ApiResult, ArrivedEntry } from '../../../shared/console-api.ts';
import type { ConsoleState } from './index.ts';

/**
 * Runs a console write that names the operator: asks for the name first when it is known to be
 * unset, and asks (then runs `again`) when the service answers operator_required. Any other
 * refusal goes to `onError`, or to the console's error bar.
 */
export async function operatorWrite<T>(
  get: () => ConsoleState,
  set: (patch: Partial<ConsoleState>) => void,
  run: () => Promise<ApiResult<T>>,
  again: () => Promise<unknown>,
  onError?: (message: string, code: string, arrived?: ArrivedEntry[]) => void,
): Promise<T | null> {
  if (get().operator === null) {
    get().askOperator(again);
    return null;
  }
  const r = await run();
  if (r.ok) return r.value;
  if (r.error.code === 'operator_required') {
    set({ operator: null });
    get().askOperator(again);
  } else if (onError) onError(r.error.message, r.error.code, r.error.arrived);
  else set({ error: r.error.message });
  return null;
}

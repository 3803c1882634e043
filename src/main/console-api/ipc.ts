import type { ApiResult, ConsoleHandlers } from '../../shared/console-api.ts';
import { dispatch } from './handlers.ts';

export const IPC_CALL = 'switchboard:call';
export const IPC_EVENT = 'switchboard:event';

/** The renderer this app loads: the bundled console page, nothing else. */
export function isTrustedSender(frameUrl: string | undefined, rendererIndex: string): boolean {
  if (!frameUrl) return false;
  try {
    const url = new URL(frameUrl);
    return url.protocol === 'file:' && decodeURIComponent(url.pathname) === rendererIndex;
  } catch {
    return false;
  }
}

/**
 * The IPC side of the console API: Electron's ipcMain.handle calls this with the sender's
 * frame URL. A call from any other frame (an injected page, a navigation that slipped through)
 * is refused before its input is even looked at.
 */
export function createIpcHandler(handlers: ConsoleHandlers, rendererIndex: string) {
  return async (frameUrl: string | undefined, method: unknown, input: unknown): Promise<ApiResult<unknown>> => {
    if (!isTrustedSender(frameUrl, rendererIndex)) return { ok: false, error: { code: 'forbidden', message: 'IPC from an untrusted frame' } };
    if (typeof method !== 'string') return { ok: false, error: { code: 'unknown_method', message: 'method must be a string' } };
    return dispatch(handlers, method, input);
  };
}

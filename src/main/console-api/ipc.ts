import { pathToFileURL } from 'node:url';
import type { ApiResult, ConsoleHandlers } from '../../shared/console-api.ts';
import { dispatch } from './handlers.ts';
import type { Caller } from '../../shared/console-roles.ts';

export const IPC_CALL = 'switchboard:call';
export const IPC_EVENT = 'switchboard:event';

export interface SenderCheckOptions {
  /** Whether rendererIndex is a Windows path; the platform's own rule unless a test says otherwise. */
  windows?: boolean;
}

/**
 * A file URL in one spelling: no query or fragment (they carry no authority), percent-escapes
 * decoded (Chromium and Node escape different sets of characters), and on Windows in one case,
 * as the file system there ignores case (Chromium also upper-cases the drive letter).
 */
function canonicalFileUrl(url: URL, windows: boolean): string {
  const bare = new URL(url.href);
  bare.search = '';
  bare.hash = '';
  const text = decodeURIComponent(bare.href);
  return windows ? text.toLowerCase() : text;
}

/**
 * The renderer this app loads: the bundled console page, nothing else. URLs are compared with
 * URLs: a frame URL's path is `/C:/…/index.html` on Windows while the native path is
 * `C:\…\index.html`, so comparing a URL path with a native path refused the real renderer there.
 */
export function isTrustedSender(frameUrl: string | undefined, rendererIndex: string, options: SenderCheckOptions = {}): boolean {
  if (!frameUrl) return false;
  const windows = options.windows ?? process.platform === 'win32';
  try {
    const url = new URL(frameUrl);
    if (url.protocol !== 'file:') return false;
    return canonicalFileUrl(url, windows) === canonicalFileUrl(pathToFileURL(rendererIndex, { windows }), windows);
  } catch {
    return false;
  }
}

/**
 * The IPC side of the console API: Electron's ipcMain.handle calls this with the sender's
 * frame URL. A call from any other frame (an injected page, a navigation that slipped through)
 * is refused before its input is even looked at.
 */
/** `owner`: the desktop window's caller, the installation's owner, read at each call (its name can change). */
export function createIpcHandler(handlers: ConsoleHandlers, rendererIndex: string, owner: () => Caller, options: SenderCheckOptions = {}) {
  return async (frameUrl: string | undefined, method: unknown, input: unknown): Promise<ApiResult<unknown>> => {
    if (!isTrustedSender(frameUrl, rendererIndex, options)) return { ok: false, error: { code: 'forbidden', message: 'IPC from an untrusted frame' } };
    if (typeof method !== 'string') return { ok: false, error: { code: 'unknown_method', message: 'method must be a string' } };
    return dispatch(handlers, method, input, owner());
  };
}

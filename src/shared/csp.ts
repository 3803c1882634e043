/**
 * The console's Content-Security-Policy: one source for every place it is enforced. The desktop
 * window loads file://, where no response header exists, so the build writes the policy into
 * index.html as a <meta> (electron.vite.config.ts); the headless console listener sends it as a
 * header as well.
 *
 * Remote media: https: only, and only for img/media, because the operator may click "Load" on an
 * attachment (src/shared/media-policy.ts decides when). Plain http: appears nowhere, so even a
 * renderer bug cannot make the console fetch over the LAN in clear text. No 'unsafe-inline' and no
 * 'unsafe-eval' in the built policy: the build emits external module scripts and a CSS file only
 * (test/electron-build.test.ts checks the output, not this string).
 */
export const CONSOLE_CSP_DIRECTIVES = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:', 'https:'],
  'media-src': ["'self'", 'data:', 'https:'],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'object-src': ["'none'"],
  'frame-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
} as const satisfies Record<string, readonly string[]>;

type Directives = Readonly<Record<string, readonly string[]>>;

/** Browsers ignore these in a <meta> policy (and say so in the console): header only. */
const HEADER_ONLY = new Set(['frame-ancestors', 'report-uri', 'sandbox']);

export function serializeCsp(directives: Directives): string {
  return Object.entries(directives)
    .map(([name, sources]) => [name, ...sources].join(' '))
    .join('; ');
}

export function parseCsp(policy: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const part of policy.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out[name.toLowerCase()] = sources;
  }
  return out;
}

const withoutHeaderOnly = (d: Directives): Directives => Object.fromEntries(Object.entries(d).filter(([name]) => !HEADER_ONLY.has(name)));

/** As a response header (the console listener). */
export const CONSOLE_CSP = serializeCsp(CONSOLE_CSP_DIRECTIVES);

/** As the <meta> in the built index.html: the same policy less what a <meta> cannot carry. */
export const CONSOLE_CSP_META = serializeCsp(withoutHeaderOnly(CONSOLE_CSP_DIRECTIVES));

/**
 * Vite's dev server only (never a build): it injects inline scripts (React refresh preamble) and
 * <style> elements for hot reload. Still no eval and no plain http.
 */
export const CONSOLE_CSP_DEV_META = serializeCsp(
  withoutHeaderOnly({
    ...CONSOLE_CSP_DIRECTIVES,
    'script-src': [...CONSOLE_CSP_DIRECTIVES['script-src'], "'unsafe-inline'"],
    'style-src': [...CONSOLE_CSP_DIRECTIVES['style-src'], "'unsafe-inline'"],
  }),
);

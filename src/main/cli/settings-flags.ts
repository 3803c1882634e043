import { checkSendUrl } from '../../shared/protocol/send-url.ts';
import { clientSettingsSchema, GROUP_POLICIES, type ClientSettings } from '../../shared/client-settings.ts';
import { isHttpsOrigin } from '../../shared/media-policy.ts';
import { UsageError } from './args.ts';
import { flagIssues } from './flag-errors.ts';

type Key = keyof ClientSettings;

interface FlagSpec {
  key: Key;
  /** What the help and error messages say the value must be. */
  expects: string;
  parse(value: string): unknown;
}

function number(min: number, max: number): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new Error(`a number from ${min} to ${max}`);
    return n;
  };
}

function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `clients add|set ID --flag value`: every per-client setting, with the values it accepts. */
export const SETTING_FLAGS: Record<string, FlagSpec> = {
  'send-url': {
    key: 'sendUrl',
    expects: 'an absolute http(s) URL (empty to unset)',
    parse: (v) => {
      if (v === '') return undefined;
      const check = checkSendUrl(v, undefined);
      const what = 'an absolute http(s) URL that is not link-local or metadata';
      // The forbidden-address reason would only repeat `what`; the others (credentials) add to it.
      if (!check.ok) throw new Error(check.code === 'send_url_not_allowed' ? what : `${what} (${check.message})`);
      return v;
    },
  },
  'allowed-origins': {
    key: 'allowedOrigins',
    expects: 'comma-separated origins like https://hooks.example.com (empty to allow any)',
    parse: (v) =>
      list(v).map((o) => {
        if (!URL.canParse(o) || new URL(o).origin !== o) throw new Error(`origins like https://hooks.example.com; "${o}" is not one`);
        return o;
      }),
  },
  'media-origins': {
    key: 'mediaOrigins',
    expects: 'comma-separated https origins like https://cdn.example.com whose attachments the console loads without a click (empty for none)',
    parse: (v) =>
      list(v).map((o) => {
        if (!isHttpsOrigin(o)) throw new Error(`https origins like https://cdn.example.com; "${o}" is not one`);
        return o;
      }),
  },
  'bound-account': { key: 'boundAccount', expects: 'an account id (empty to unset)', parse: (v) => (v === '' ? undefined : v) },
  'bot-ids': { key: 'botIds', expects: 'comma-separated ids', parse: list },
  'group-policy': {
    key: 'groupPolicy',
    expects: `one of ${GROUP_POLICIES.join(', ')}`,
    parse: (v) => {
      if (!(GROUP_POLICIES as readonly string[]).includes(v)) throw new Error(`one of ${GROUP_POLICIES.join(', ')}`);
      return v;
    },
  },
  'pause-minutes': { key: 'pauseMinutes', expects: 'minutes from 0 (off) to 10080', parse: number(0, 10080) },
  'stale-minutes': { key: 'staleMinutes', expects: 'minutes from 0 (off) to 10080', parse: number(0, 10080) },
  'quiet-seconds': { key: 'quietSeconds', expects: 'seconds from 0 to 600', parse: number(0, 600) },
  'quiet-max-seconds': { key: 'quietMaxSeconds', expects: 'seconds from 0 to 3600', parse: number(0, 3600) },
  engine: { key: 'engine', expects: '"kb" (the built-in knowledge base) or the name of an engine from "engines list"', parse: (v) => v },
  'fallback-text': { key: 'fallbackText', expects: 'text to send when the engine hands off (empty to send nothing)', parse: (v) => (v === '' ? undefined : v) },
};

/** Applies the given flags over `base`; a bad value names the flag and what it accepts. */
export function applySettingFlags(base: ClientSettings, flags: Record<string, unknown>): ClientSettings {
  const next: Record<string, unknown> = { ...base };
  for (const [flag, spec] of Object.entries(SETTING_FLAGS)) {
    const value = flags[flag];
    if (typeof value !== 'string') continue;
    try {
      next[spec.key] = spec.parse(value);
    } catch (error) {
      throw new UsageError(`--${flag} must be ${(error as Error).message}, got "${value}"`);
    }
  }
  const parsed = clientSettingsSchema.safeParse(next);
  if (!parsed.success) {
    const flagOf = Object.fromEntries(Object.entries(SETTING_FLAGS).map(([flag, spec]) => [spec.key, flag]));
    throw new UsageError(flagIssues(parsed.error.issues, flagOf, flags, next));
  }
  return parsed.data;
}

export function describeSettings(s: ClientSettings): string {
  const rows: Array<[string, string]> = [
    ['send-url', s.sendUrl ?? '(none: every auto_dialog must carry send_url)'],
    ['allowed-origins', s.allowedOrigins.length ? s.allowedOrigins.join(', ') : '(any)'],
    ['media-origins', s.mediaOrigins.length ? s.mediaOrigins.join(', ') : '(none: https attachments load on a click)'],
    ['bound-account', s.boundAccount ?? '(none)'],
    ['bot-ids', s.botIds.length ? s.botIds.join(', ') : '(none)'],
    ['group-policy', s.groupPolicy],
    ['pause-minutes', String(s.pauseMinutes)],
    ['stale-minutes', String(s.staleMinutes)],
    ['quiet-seconds', String(s.quietSeconds)],
    ['quiet-max-seconds', String(s.quietMaxSeconds)],
    ['fallback-text', s.fallbackText ?? '(none: a handoff sends nothing)'],
    ['engine', s.engine],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

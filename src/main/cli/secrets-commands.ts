import type { Keyring } from '../auth/secret-box.ts';
import { checkStoredSecrets, resealStoredSecrets, rotateStoredKey, type CheckReport, type RotationHooks } from '../auth/key-rotation.ts';
import type { StoreTarget } from './store-target.ts';
import { ensurePrivateFile } from '../store/data-dir.ts';
import { KEY_ENV, KEY_PREVIOUS_ENV, keyFileText, newKey, readKeyFile, SecretKeyError } from '../auth/sealing-key.ts';
import { UsageError } from './args.ts';

export const SECRETS_USAGE = `  secrets check           (opens every client secret and engine key; says which key sealed each, and which do not open)
  secrets rotate-key [--new-key-file FILE]
                          (a new sealing key, or FILE's; every value re-sealed in one transaction; the old key kept as <key file>.old)
  secrets reseal          (every value under this node's key, after the key was changed by hand on every node)
  secrets new-key FILE    (writes a new random key to FILE, 0600; never overwrites)
    the key: --secret-key-file FILE, or SWITCHBOARD_SECRET_KEY_FILE, or SWITCHBOARD_SECRET_KEY (base64 of 32 bytes),
             or secretKeyFile in config.json, else the data folder's secret.key`;

export interface SecretsOutcome {
  out: string;
  /** 1 when `check` found values that do not open. */
  status: number;
}

function keysLine(report: CheckReport): string {
  const { current, previous } = report.keys;
  return `this node's key: ${current.id} (${current.source})${previous ? `; previous key ${previous.id} (${previous.source}), opens only` : ''}`;
}

function checkText(report: CheckReport): string {
  const lines = [keysLine(report)];
  const total = [...report.bySealer.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return [...lines, 'no client secrets or engine keys are stored'].join('\n');
  const name = (by: string): string =>
    by === report.keys.current.id ? `key ${by} (this node's)` : by === report.keys.previous?.id ? `key ${by} (the previous key)` : by === 'v1' ? 'the older format (no key id)' : /^[0-9a-f]{8}$/.test(by) ? `key ${by}` : `"${by}" (the desktop app's OS keychain; not checked here)`;
  for (const [by, n] of report.bySealer) lines.push(`sealed with ${name(by)}: ${n}`);
  for (const f of report.failures) lines.push(`does not open: ${f.label}: ${f.error}`);
  const checked = total - report.foreign;
  lines.push(report.failures.length === 0 ? `all ${checked} value${checked === 1 ? '' : 's'} open with this node's keys` : `${report.failures.length} of ${checked} values do not open with this node's keys`);
  if (report.failures.length === 0 && report.notUnderCurrent > 0) lines.push(`${report.notUnderCurrent} not under this node's key ${report.keys.current.id}: "secrets reseal" moves them`);
  if (report.failures.length === 0 && report.notUnderCurrent === 0 && report.keys.previous) {
    lines.push(`no value needs the previous key: once every node runs key ${report.keys.current.id}, remove ${report.keys.previous.source}`);
  }
  return lines.join('\n');
}

/**
 * `secrets check | reseal | rotate-key` on the data folder's SQLite file or on PostgreSQL (each
 * re-seal one transaction of that store). On PostgreSQL every node opens the same rows: each must
 * be restarted with the new key (a node started with the old key only refuses to start: none of
 * the stored values opens with it).
 */
export async function secretsCommand(target: StoreTarget, ring: () => Keyring, args: string[], flags: { 'new-key-file'?: string | undefined }, hooks: RotationHooks = {}): Promise<SecretsOutcome> {
  const [action] = args;
  const noArgument = (n: number): void => {
    const stray = args[n];
    if (stray !== undefined) throw new UsageError(`secrets ${action} takes no argument, got "${stray}"`);
  };
  if (flags['new-key-file'] !== undefined && action !== 'rotate-key') throw new UsageError('--new-key-file goes with secrets rotate-key');
  switch (action) {
    case 'check': {
      noArgument(1);
      const report = await checkStoredSecrets(target.store, ring());
      return { out: checkText(report), status: report.failures.length > 0 ? 1 : 0 };
    }
    case 'reseal': {
      noArgument(1);
      const keyring = ring();
      const n = await resealStoredSecrets(target, keyring);
      return { out: `re-sealed ${n} value${n === 1 ? '' : 's'} under key ${keyring.keys().current.id}`, status: 0 };
    }
    case 'rotate-key': {
      noArgument(1);
      const given = flags['new-key-file'] === undefined ? null : readKeyFile(flags['new-key-file'], `--new-key-file ${flags['new-key-file']}`);
      const r = await rotateStoredKey(target, ring(), given, hooks);
      const lines = [`re-sealed ${r.resealed} value${r.resealed === 1 ? '' : 's'}: key ${r.from.id} → ${r.to.id}`];
      if (r.foreign > 0) lines.push(`${r.foreign} sealed by the desktop app's OS keychain left as they were (that key is not this one)`);
      if (r.wrote) {
        lines.push(
          `the new key is in ${r.wrote.key}; the old one stays in ${r.wrote.previous} (it opens, never seals)`,
          `every other node needs the new key file: copy it there (0600), keep their old one as ${r.wrote.previous.split('/').pop()}, restart them`,
          `when "secrets check" on every node says no value needs the previous key, remove ${r.wrote.previous}`,
        );
      } else {
        lines.push(
          `this node's key comes from ${KEY_ENV}: nothing was written. On every node set ${KEY_ENV} to the contents of ${flags['new-key-file']} (key ${r.to.id}) and restart it;`,
          `until then a node with the old key cannot open these values (its signed requests are refused). To rotate without that gap, give every node ${KEY_PREVIOUS_ENV} (the old key) and the new ${KEY_ENV} first, then run "secrets reseal" (docs/operations.md, "Secret key")`,
        );
      }
      if (r.resealed > 0) lines.push(`a node started with only the old key ${r.from.id} refuses to start (none of the stored values opens with it)`);
      return { out: lines.join('\n'), status: 0 };
    }
    case 'new-key':
      throw new UsageError('secrets new-key runs without a database: see newKeyCommand');
    default:
      throw new UsageError(`unknown secrets command "${action ?? ''}"; use check, rotate-key, reseal or new-key`);
  }
}

/** `secrets new-key FILE`: needs no data folder, database or current key. */
export function newKeyCommand(args: string[]): string {
  const [file, extra] = args;
  if (!file) throw new UsageError('secrets new-key needs a FILE to write the key to');
  if (extra !== undefined) throw new UsageError(`secrets new-key takes one FILE, got also "${extra}"`);
  const key = newKey(file);
  let made: boolean;
  try {
    made = ensurePrivateFile(file, keyFileText(key.bytes));
  } catch (error) {
    throw new SecretKeyError(`cannot write ${file}: ${(error as Error).message}`);
  }
  if (!made) throw new UsageError(`${file} exists; secrets new-key never overwrites a key`);
  return `wrote a new key to ${file} (key ${key.id}, 0600)`;
}

import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

export class UsageError extends Error {}

export function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new UsageError(`${flag} must be a port number 0..65535 (0 picks a free port), got "${value}"`);
  return n;
}

/** Edit distance with adjacent transpositions (`--form` is one edit from `--from`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known flag a mistyped one most likely meant: at most 2 edits away, and fewer edits than the
 * typed name has letters (so `--xy` does not "mean" `--to`).
 */
export function closestFlag(typed: string, known: readonly string[]): string | undefined {
  const name = typed.replace(/^--?/, '').replace(/=.*$/, '');
  let best: { flag: string; distance: number } | undefined;
  for (const flag of known) {
    const distance = editDistance(name, flag);
    if (distance <= 2 && distance < name.length && (!best || distance < best.distance)) best = { flag, distance };
  }
  return best && `--${best.flag}`;
}

/**
 * A parseArgs failure as one line naming the flag (node's own messages are long and suggest `--`
 * tricks an operator does not need), with the flag that was probably meant.
 */
export function flagError(error: unknown, command: string, known: readonly string[], help = `npm run cli -- ${command} --help`): UsageError {
  const { code, message } = error as { code?: string; message: string };
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const meant = closestFlag(flag, known);
      return new UsageError(`${command} has no option ${flag}${meant ? ` (did you mean ${meant}?)` : ''}; see ${help}`);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(/does not take an argument/.test(message) ? `${flag} takes no value` : `${flag} needs a value`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(`${command} takes flags only, got "${/'([^']*)'/.exec(message)?.[1] ?? ''}" (quote a value with spaces: --content "two words")`);
    default:
      return new UsageError(message);
  }
}

/** parseArgs for one command (send, receive), its errors worded by `flagError`. */
export function parseCommandFlags<T extends ParseArgsOptionsConfig>(command: string, argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw flagError(error, command, Object.keys(options));
  }
}

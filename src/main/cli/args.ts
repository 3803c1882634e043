import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

export class UsageError extends Error {}

export function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new UsageError(`${flag} must be a port number 0..65535 (0 picks a free port), got "${value}"`);
  return n;
}

/**
 * parseArgs for one command (send, receive) with its errors as one line naming the flag: node's
 * own messages are long and suggest `--` tricks an operator does not need.
 */
export function parseCommandFlags<T extends ParseArgsOptionsConfig>(command: string, argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? '';
    switch (code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`${command} has no option ${flag}; see npm run cli -- ${command} --help`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        throw new UsageError(/does not take an argument/.test(message) ? `${flag} takes no value` : `${flag} needs a value`);
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        throw new UsageError(`${command} takes flags only, got "${/'([^']*)'/.exec(message)?.[1] ?? ''}" (quote a value with spaces: --content "two words")`);
      default:
        throw new UsageError(message);
    }
  }
}

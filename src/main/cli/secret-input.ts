import { UsageError } from './args.ts';

export interface SecretFlags {
  secret?: string;
  'secret-env'?: string;
  'secret-stdin'?: boolean;
}

/** Where send and receive read a client secret from and say warnings; tests pass their own. */
export interface SecretIo {
  env: Record<string, string | undefined>;
  readStdin: () => Promise<string>;
  warn: (line: string) => void;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}

export const processSecretIo: SecretIo = {
  env: process.env,
  readStdin: () => {
    if (process.stdin.isTTY) console.error('reading the client secret from standard input: paste it, then Enter and Ctrl-D');
    return readAll(process.stdin);
  },
  warn: (line) => console.error(line),
};

/**
 * The client secret from exactly one of --secret S (docs/protocol.md section 10), --secret-env NAME or
 * --secret-stdin; undefined when none is given. A secret in argv shows in `ps` and shell history,
 * so --secret says so once on stderr. Errors name the flag and never echo a secret.
 */
export async function secretFrom(flags: SecretFlags, io: SecretIo): Promise<string | undefined> {
  const given = (['secret', 'secret-env', 'secret-stdin'] as const).filter((f) => flags[f] !== undefined && flags[f] !== false);
  if (given.length > 1) throw new UsageError(`give the secret one way only, not ${given.map((f) => `--${f}`).join(' and ')}`);
  let secret: string;
  let flag: string;
  if (flags['secret-env'] !== undefined) {
    const name = flags['secret-env'];
    flag = `--secret-env ${name}`;
    if (!ENV_NAME.test(name)) throw new UsageError('--secret-env takes the NAME of an environment variable (letters, digits, _), not the secret itself');
    secret = io.env[name] ?? '';
    if (secret.trim() === '') throw new UsageError(`--secret-env ${name}: that environment variable is unset or empty`);
  } else if (flags['secret-stdin']) {
    flag = '--secret-stdin';
    secret = await io.readStdin();
    if (secret.trim() === '') throw new UsageError('--secret-stdin: standard input was empty; pipe the secret in');
  } else if (flags.secret !== undefined) {
    flag = '--secret';
    secret = flags.secret;
    if (secret.trim() === '') throw new UsageError('--secret is empty');
    io.warn('note: --secret puts the secret on the command line (ps, shell history); --secret-env NAME or --secret-stdin keep it off');
  } else {
    return undefined;
  }
  // A secret is used byte for byte; only the line break a pipe or a paste adds is dropped.
  secret = secret.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(secret)) throw new UsageError(`${flag}: the secret has a line break inside; give the secret alone`);
  return secret;
}

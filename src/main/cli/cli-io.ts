import { processSecretIo, type SecretIo } from './secret-input.ts';
import type { EnginesIo } from './engines-commands.ts';

/**
 * Where the CLI writes, reads its environment and standard input, and learns it should stop: the
 * process's (npm run cli) or a test's, which runs commands in its own process and reads what they
 * printed (a Node start per command was most of test/cli.test.ts's time). The same shape send and
 * receive take, so they are handed it as is.
 */
export interface CliIo extends SecretIo {
  /** One line (or several joined by \n) on standard output; a line break follows. */
  out: (text: string) => void;
  err: (text: string) => void;
  nowMs: () => number;
  /** Resolves with the signal's name when a long-running command (receive) should stop. */
  stopped: () => Promise<string>;
  /** Where engines add reads an API key (its stdin prompt names the key); absent: the process's. */
  engines?: EnginesIo;
}

export const processCliIo: CliIo = {
  ...processSecretIo,
  out: (text) => console.log(text),
  err: (text) => console.error(text),
  nowMs: () => Date.now(),
  stopped: () =>
    new Promise((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    }),
};

import { runCli } from '../../src/main/cli/index.ts';
import type { CliIo } from '../../src/main/cli/cli-io.ts';
import type { CliResult } from './processes.ts';

export interface HereOptions {
  /** Added to this process's environment, as a child's would be. */
  env?: Record<string, string>;
  /** Standard input (--secret-stdin, --api-key-stdin); empty by default, as spawnSync's. */
  input?: string;
}

/**
 * `npm run cli -- ARGS` run in this process: the same runCli a real start runs, with stdout and
 * stderr captured as a child's would be (every write one line), and the exit status it returns.
 * A Node start per command cost about 0.3 s; this costs milliseconds. What only a real process
 * shows (process.exitCode, the process's stdin, environment and console) stays covered by the
 * cases that spawn one (cli() in processes.ts).
 */
export async function cliHereArgs(args: string[], options: HereOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    env: { ...process.env, ...options.env },
    readStdin: async () => options.input ?? '',
    warn: (line) => (stderr += `${line}\n`),
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    nowMs: () => Date.now(),
    // receive waits for this after it listens: a test that runs it here would pass its own stop.
    stopped: () => Promise.resolve('SIGTERM'),
  };
  const status = await runCli(args, io);
  return { status, stdout, stderr };
}

/** As processes.ts's cli(): ARGS then --data-dir DIR. */
export const cliHere = (dataDir: string, ...args: string[]): Promise<CliResult> => cliHereArgs([...args, '--data-dir', dataDir]);

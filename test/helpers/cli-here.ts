import { runCli } from '../../src/main/cli/index.ts';
import type { CliIo } from '../../src/main/cli/cli-io.ts';
import type { CliResult } from './processes.ts';

export interface HereOptions {
  /** Added to this process's environment, as a child's would be. */
  env?: Record<string, string>;
  /** Standard input (--secret-stdin, --api-key-stdin); empty by default, as spawnSync's. */
  input?: string;
  /** The CLI's clock (what `now` a command records); default the wall clock. */
  nowMs?: () => number;
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
  const env = { ...process.env, ...options.env };
  const readStdin = async (): Promise<string> => options.input ?? '';
  const warn = (line: string): void => void (stderr += `${line}\n`);
  const io: CliIo = {
    env,
    readStdin,
    warn,
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    nowMs: options.nowMs ?? (() => Date.now()),
    // receive waits for this once it listens: here it stops at once (tests run a receiver as a process).
    stopped: () => Promise.resolve('SIGTERM'),
    engines: { env, readStdin, warn },
  };
  const status = await runCli(args, io);
  return { status, stdout, stderr };
}

/** As processes.ts's cli(): ARGS then --data-dir DIR. */
export const cliHere = (dataDir: string, ...args: string[]): Promise<CliResult> => cliHereArgs([...args, '--data-dir', dataDir]);

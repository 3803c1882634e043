import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { MAIN_V8_FLAGS } from '../../src/main/runtime-flags.ts';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

const ROOT = new URL('../../', import.meta.url).pathname;

export interface ServeProcess {
  child: ChildProcess;
  endpoint: string;
  /** The printed console URL, token in its fragment: what an operator opens. */
  console: string;
  /** The console address without the token, and the token alone (for API calls with Bearer). */
  consoleBase: string;
  consoleToken: string;
  /** Behind --public-origin: where the listener itself is (the `console listener:` line). */
  listener: string | null;
  base: string;
  stderr(): string;
  exit(): Promise<number | null>;
}

/** `npm run serve` as a real child process; resolves once it printed its endpoint and console lines. `env` is added to this process's. */
export async function spawnServe(dataDir: string, extra: string[] = [], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...MAIN_V8_FLAGS, 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir, ...extra], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines = createInterface({ input: child.stdout! });
  let endpoint = '';
  let consoleUrl = '';
  let listener: string | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('endpoint: ')) endpoint = line.slice(10);
      if (line.startsWith('console: ')) consoleUrl = line.slice(9);
      if (line.startsWith('console listener: ')) listener = line.slice(18).split(' ')[0]!;
      if (endpoint && consoleUrl) resolve();
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  await ready;
  return {
    child,
    endpoint,
    console: consoleUrl,
    consoleBase: `${new URL(consoleUrl).origin}/`,
    consoleToken: new URLSearchParams(new URL(consoleUrl).hash.slice(1)).get('token') ?? '',
    listener,
    base: endpoint.replace('/custom-im/chat-messages', ''),
    stderr: () => err,
    exit: () => exited,
  };
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function cli(dataDir: string, ...args: string[]): CliResult {
  const r = spawnSync(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function secretFrom(output: string): string {
  const m = /^secret: (\S+)$/m.exec(output);
  if (!m) throw new Error(`no secret in: ${output}`);
  return m[1]!;
}

/** The CLI without blocking this process: for commands that talk to a server running in it. */
export function cliAsync(dataDir: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['src/main/cli/index.ts', ...args, '--data-dir', dataDir], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/** A Python program running beside the test, read line by line as it prints. */
export interface PythonProgram {
  child: ChildProcess;
  /** Everything printed so far, one entry per line. */
  lines: string[];
  /** Resolves with the first line (already printed or still to come) that matches. */
  line(pattern: RegExp, what: string, timeoutMs?: number): Promise<RegExpExecArray>;
  write(text: string): void;
  stop(): Promise<void>;
}

export function startPython(program: string, env: Record<string, string> = {}): PythonProgram {
  const child = spawn('python3', ['-u', '-c', program], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters) wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    for (const wake of waiters) wake();
  });

  return {
    child,
    lines,
    line(pattern, what, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          for (const l of lines) {
            const m = pattern.exec(l);
            if (m) return done(() => resolve(m));
          }
          if (child.exitCode !== null) done(() => reject(new Error(`python3 exited (${child.exitCode}) before ${what}:\n${stderr}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${what}; printed:\n${lines.join('\n')}\n${stderr}`))), timeoutMs);
        const done = (settle: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    write(text) {
      child.stdin!.write(text);
    },
    async stop() {
      if (child.exitCode === null) child.kill();
      await exited;
    },
  };
}

/** Runs a short Python program to its end: its standard output, or a failure with its standard error. */
export function runPython(program: string, input = ''): string {
  const run = spawnSync('python3', ['-c', program], { input, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python3 failed (${run.status}):\n${run.stderr}`);
  return run.stdout;
}

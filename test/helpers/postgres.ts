import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, appendFileSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A real, throwaway PostgreSQL server for one test run: a temporary folder, initdb, a free port on
 * 127.0.0.1, the unix socket in that folder. Debian's binaries (/usr/lib/postgresql/<major>/bin,
 * the newest major) or PATH's. PostgreSQL refuses to run as root and CI runs as root, so as root
 * initdb and pg_ctl run as the unprivileged `postgres` user (Debian's package creates it) through
 * runuser, and the folder is given to that user.
 *
 *   const skip = postgresSkipReason();
 *   describe('…', { skip }, () => { let pg: PgServer; before(async () => (pg = await startPostgres())); after(() => pg.stop()); … });
 */

const run = promisify(execFile);

export interface PgOptions {
  /**
   * fsync and synchronous commit. Off by default: the folder is thrown away, so a flush to disk buys
   * nothing but time (on this machine's disk a commit waits milliseconds for it). A test of crash
   * safety (kill -9, pulled power) turns it on, or it proves nothing.
   */
  durable?: boolean;
  /** Where the Debian majors are (default /usr/lib/postgresql); a test points it at an empty folder. */
  libDir?: string;
  /** The PATH searched when libDir has no binaries (default process.env.PATH). */
  path?: string;
  /** initdb's locale; C.UTF-8 so that character classes (full text, trigrams) know non-ASCII letters. */
  locale?: string;
  /**
   * A folder where the first server's fresh cluster is kept, so later servers copy it (cp -a, ~0.05 s)
   * instead of running initdb (~0.5 s of CPU each). Default SWITCHBOARD_PG_TEMPLATES, which npm test
   * (test/run.ts) sets to a folder it deletes after the run; unset (a file run alone), every server
   * runs initdb. Each server still gets its own copy: only the starting files are shared.
   */
  templates?: string;
}

export interface PgServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, reachable from this machine only). */
  url: string;
  port: number;
  /** The temporary folder: data/ (the cluster), the unix socket and server.log. */
  dir: string;
  dataDir: string;
  /** Stops the server (fast shutdown) and deletes the folder; safe to call twice. */
  stop(): Promise<void>;
  /** Stops the server and keeps its data (an outage); `resume` starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

interface Binaries {
  bin: string;
  /** Prefix for initdb/pg_ctl: runuser to the postgres user when we are root. */
  as: string[];
  owner: { uid: number; gid: number } | null;
}

const TOOLS = ['initdb', 'pg_ctl', 'postgres'];

const hasTools = (dir: string): boolean =>
  TOOLS.every((t) => {
    try {
      accessSync(join(dir, t), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

function findBin(options: PgOptions): string | null {
  const libDir = options.libDir ?? '/usr/lib/postgresql';
  const majors = existsSync(libDir)
    ? readdirSync(libDir)
        .filter((d) => /^\d+$/.test(d))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const major of majors) if (hasTools(join(libDir, major, 'bin'))) return join(libDir, major, 'bin');
  for (const dir of (options.path ?? process.env['PATH'] ?? '').split(delimiter)) if (dir && hasTools(dir)) return dir;
  return null;
}

function idOf(user: string): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

function resolve(options: PgOptions): Binaries | string {
  const bin = findBin(options);
  if (!bin) {
    const libDir = options.libDir ?? '/usr/lib/postgresql';
    return `PostgreSQL is not installed: no initdb, pg_ctl and postgres in ${libDir}/<major>/bin or on PATH (apt-get install postgresql)`;
  }
  if (process.getuid?.() !== 0) return { bin, as: [], owner: null };
  const owner = idOf('postgres');
  if (!owner) return 'PostgreSQL refuses to run as root and there is no "postgres" user to run it as (apt-get install postgresql creates one)';
  if (!hasRunuser()) return 'PostgreSQL refuses to run as root and runuser (util-linux) is not installed to run it as "postgres"';
  return { bin, as: ['runuser', '-u', 'postgres', '--'], owner };
}

const hasRunuser = (): boolean => ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].some((p) => existsSync(p));

/** Why a PostgreSQL server cannot start here, in one line, or false when it can: node:test's `skip`. */
export function postgresSkipReason(options: PgOptions = {}): string | false {
  const r = resolve(options);
  return typeof r === 'string' ? r : false;
}

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });
}

/** The folder in `templates` a cluster of these binaries and locale is kept under. */
function templatePath(templates: string, bin: string, locale: string): string {
  return join(templates, `cluster-${createHash('sha256').update(`${bin}\0${locale}`).digest('hex').slice(0, 16)}`);
}

/**
 * Keeps a fresh cluster as the template, unless another process kept one first: the copy is made
 * beside it and renamed into place, so no file ever sees half a template, and no one waits for a
 * lock (the files that start together each run initdb once, as without a template).
 */
async function keepAsTemplate(dataDir: string, template: string, copy: (from: string, to: string) => Promise<unknown>): Promise<void> {
  if (existsSync(template)) return;
  const staging = `${template}.${process.pid}-${Date.now()}`;
  try {
    await copy(dataDir, staging);
    renameSync(staging, template);
  } catch {
    // Another file's template got there first (the rename finds a full folder), or the folder
    // cannot be written: this server has its cluster either way.
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Starts a server; throws (with the server's log) when the binaries are there and it still fails:
 * that is a fault to see, not a reason to skip.
 */
export async function startPostgres(options: PgOptions = {}): Promise<PgServer> {
  const found = resolve(options);
  if (typeof found === 'string') throw new Error(found);
  const { bin, as, owner } = found;
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-'));
  const dataDir = join(dir, 'data');
  const log = join(dir, 'server.log');
  const give = (path: string): void => {
    if (owner) chownSync(path, owner.uid, owner.gid);
  };
  give(dir);
  const tool = (name: string, args: string[]) => {
    const [cmd, ...pre] = [...as, join(bin, name)];
    // cwd: the folder the postgres user can enter (initdb warns when it cannot stat the cwd).
    return run(cmd!, [...pre, ...args], { cwd: dir, encoding: 'utf8' });
  };

  // The watchdog is the one thing that outlives this process: when its stdin closes (this process
  // exited, however it died, even kill -9) it stops the server and deletes the folder. Detached,
  // so a Ctrl-C to the test run's process group does not take it down before it cleaned up.
  const watchdog = spawn(
    'sh',
    ['-c', 'cat >/dev/null; "$@" stop -D "$DATA" -m immediate -w >/dev/null 2>&1; rm -rf "$DIR"', 'pg-watchdog', ...as, join(bin, 'pg_ctl')],
    { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: { ...process.env, DATA: dataDir, DIR: dir }, cwd: dir },
  );
  watchdog.unref();
  // A pipe to a child is a net.Socket; unref'd, it does not keep this process alive.
  (watchdog.stdin as Socket).unref();

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (existsSync(join(dataDir, 'postmaster.pid'))) await tool('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    // Cleaned up already: the watchdog (sh and its cat, a process group of their own) has nothing left to do.
    if (watchdog.pid !== undefined && watchdog.exitCode === null) {
      try {
        process.kill(-watchdog.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    watchdog.stdin!.destroy();
  };

  try {
    const locale = options.locale ?? 'C.UTF-8';
    const templates = options.templates ?? process.env['SWITCHBOARD_PG_TEMPLATES'];
    const template = templates ? templatePath(templates, bin, locale) : null;
    // As the user the server runs as, so the copy is that user's (cp -a keeps modes and times).
    const copy = (from: string, to: string) => {
      const [cmd, ...pre] = [...as, 'cp'];
      return run(cmd!, [...pre, '-a', from, to], { cwd: dir });
    };
    if (template && existsSync(template)) await copy(template, dataDir);
    else {
      // --no-sync: a throwaway cluster; a crash test kills the server, not the machine, so the
      // files initdb wrote are in the page cache either way.
      await tool('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', `--locale=${locale}`, '--no-sync', '--no-instructions']);
      // Before this server's settings go in: the template is the cluster as initdb left it.
      if (template) await keepAsTemplate(dataDir, template, copy);
    }
    const durable = options.durable ?? false;
    let lastError: unknown;
    // A port found free can be taken before the server binds it: try another.
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const conf = join(dataDir, 'postgresql.auto.conf');
      appendFileSync(
        conf,
        [
          `port = ${port}`,
          `listen_addresses = '127.0.0.1'`,
          `unix_socket_directories = '${dir}'`,
          `fsync = ${durable ? 'on' : 'off'}`,
          `synchronous_commit = ${durable ? 'on' : 'off'}`,
          `full_page_writes = ${durable ? 'on' : 'off'}`,
          '',
        ].join('\n'),
      );
      give(conf);
      try {
        await tool('pg_ctl', ['start', '-D', dataDir, '-l', log, '-w', '-t', '30']);
        const pause = async (): Promise<void> => void (await tool('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w']));
        const resume = async (): Promise<void> => void (await tool('pg_ctl', ['start', '-D', dataDir, '-l', log, '-w', '-t', '30']));
        return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, dataDir, stop, pause, resume };
      } catch (e) {
        lastError = e;
        const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
        if (!/could not bind|Address already in use/.test(text)) break;
      }
    }
    const text = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
    throw new Error(`PostgreSQL did not start: ${String(lastError)}\n${text}`);
  } catch (e) {
    await stop();
    throw e;
  }
}

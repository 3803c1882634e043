import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Clock ticks per second of /proc's CPU times: 100 on Linux (USER_HZ), whatever the kernel's HZ. */
const TICKS = 100;

interface ProcStat { ppid: number; cpu: number; children: number }

/** A process's /proc/<pid>/stat: its parent, its own user + system CPU seconds (all its threads), and those of its children it has waited for. */
function procStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone
  }
  // The command name (field 2) is in brackets and may hold spaces: the fields after it are counted from its end.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): ppid field 4, utime 14, stime 15, cutime 16, cstime 17.
  const at = (field: number): number => Number(f[field - 3]);
  return { ppid: at(4), cpu: (at(14) + at(15)) / TICKS, children: (at(16) + at(17)) / TICKS };
}

/** CPU seconds (user + system) one process has used so far, all its threads; NaN once it is gone. */
export function processCpuSeconds(pid: number | undefined): number {
  const s = pid === undefined ? null : procStat(pid);
  return s ? s.cpu : NaN;
}

/**
 * CPU seconds a PostgreSQL cluster has used so far: the postmaster (pid from `postmaster.pid` in
 * its data folder), every live child (backends, WAL writer, checkpointer…) and the children it has
 * reaped (a backend whose connection closed), so the difference of two readings is the cluster's
 * CPU time between them even when backends come and go.
 */
export function postgresCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const main = procStat(postmaster);
  if (!main) return NaN;
  let total = main.cpu + main.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = procStat(Number(entry));
    if (s?.ppid === postmaster) total += s.cpu;
  }
  return total;
}

/** CPU seconds each process of a PostgreSQL cluster used so far, by its title (`postgres: walwriter`, a backend's database and state…); `(reaped children)` for those gone. */
export function postgresCpuByProcess(dataDir: string): Array<{ title: string; seconds: number }> {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const main = procStat(postmaster);
  if (!main) return [];
  const out = [{ title: 'postmaster', seconds: main.cpu }, { title: '(reaped children: autovacuum workers, closed connections)', seconds: main.children }];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = procStat(Number(entry));
    if (s?.ppid !== postmaster) continue;
    let title = '?';
    try {
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
      // gone meanwhile
    }
    out.push({ title, seconds: s.cpu });
  }
  return out.sort((a, b) => b.seconds - a.seconds);
}

// Top self-time functions of V8 .cpuprofile files (node --cpu-prof writes one per thread):
//   node bench/cpu-profile-summary.ts DIR_OR_FILES... [--top 25] [--by-script | --inclusive]
// Prints one Markdown table per profile: self time summed by function and script (or by script
// alone with --by-script: node internals, sqlite calls made from a store file count there), with its share
// of the profile's sampled time. --inclusive counts each sample once for every function on its
// stack, so a function's figure is the time under it, callees included: where a flat self-time
// profile names no culprit, this says which of our steps the time is spent under. Used to find
// where an ingest request spends its time (issue 10).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const ROOT_URL = new URL('../', import.meta.url).href;

function shortUrl(url: string): string {
  if (url === '') return '';
  if (url.startsWith(ROOT_URL)) return url.slice(ROOT_URL.length);
  return url.replace(/^.*\/node_modules\//, 'node_modules/');
}

export type Grouping = 'function' | 'script' | 'inclusive';

export function summarize(profile: CpuProfile, grouping: Grouping = 'function'): { totalMs: number; rows: Array<{ key: string; ms: number }> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const keyOf = (id: number): string => {
    const f = byId.get(id)!.callFrame;
    const name = f.functionName || '(anonymous)';
    const url = shortUrl(f.url);
    if (grouping === 'script') return url || name;
    return url ? `${name} ${url}:${f.lineNumber + 1}` : name;
  };
  // A recursive function appears once per sample, however deep it recurs.
  const keysOnStack = (id: number): string[] => {
    if (grouping !== 'inclusive') return [keyOf(id)];
    const keys = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) if (byId.get(at)!.callFrame.functionName !== '(root)') keys.add(keyOf(at));
    return [...keys];
  };
  const sampledUs = new Map<number, number>();
  // Each sample's time is the delta to the next one, attributed to the sampled (leaf) node.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    sampledUs.set(profile.samples[i]!, (sampledUs.get(profile.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const byKey = new Map<string, number>();
  let total = 0;
  for (const [id, us] of sampledUs) {
    for (const key of keysOnStack(id)) byKey.set(key, (byKey.get(key) ?? 0) + us);
    total += us;
  }
  const rows = [...byKey].map(([key, us]) => ({ key, ms: us / 1000 })).sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, rows };
}

function files(args: string[]): string[] {
  return args.flatMap((a) =>
    statSync(a).isDirectory() ? readdirSync(a).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => join(a, f)) : [a],
  );
}

function main(): void {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
  const flag = (name: string): boolean => {
    const at = args.indexOf(name);
    if (at >= 0) args.splice(at, 1);
    return at >= 0;
  };
  const byScript = flag('--by-script');
  const inclusive = flag('--inclusive');
  if (args.length === 0 || (byScript && inclusive)) {
    console.error('usage: node bench/cpu-profile-summary.ts DIR_OR_FILES... [--top 25] [--by-script | --inclusive]');
    process.exit(2);
  }
  const grouping: Grouping = byScript ? 'script' : inclusive ? 'inclusive' : 'function';
  for (const file of files(args)) {
    const { totalMs, rows } = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, grouping);
    const idle = rows.find((r) => r.key === '(idle)')?.ms ?? 0;
    console.log(`\n### ${basename(file)}: ${totalMs.toFixed(0)} ms sampled, ${(totalMs - idle).toFixed(0)} ms busy\n`);
    console.log(`| ${inclusive ? 'ms under it' : 'self ms'} | % busy | ${byScript ? 'script' : 'function (script:line)'} |\n|---:|---:|---|`);
    for (const r of rows.filter((r) => r.key !== '(idle)').slice(0, top)) {
      console.log(`| ${r.ms.toFixed(1)} | ${((100 * r.ms) / Math.max(1, totalMs - idle)).toFixed(1)} | ${r.key.replace(/\|/g, '\\|')} |`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();

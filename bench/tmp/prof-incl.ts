import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2]!;
const p = JSON.parse(readFileSync(dir + '/' + readdirSync(dir)[0], 'utf8'));
const self = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const nodes = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
const total = (id: number): number => { const n = nodes.get(id); return (self.get(id) ?? 0) + (n.children ?? []).reduce((s: number, c: number) => s + total(c), 0); };
const incl = new Map<string, number>();
for (const n of p.nodes) { const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; incl.set(k, (incl.get(k) ?? 0) + total(n.id)); }
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log((t / 1000).toFixed(0).padStart(7), k);

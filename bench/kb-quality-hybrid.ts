// npm run bench -- kb-quality --embeddings-url URL --embedding-model M [--api-key-env VAR]:
// the same questions ranked by the hybrid ranking (words and meaning) of an engine with an
// embedding model, next to the lexical figures. kb-quality.ts calls this only when the flag is given.
import { parseArgs } from 'node:util';
import { createSemantic } from '../src/main/engines/embeddings/semantic.ts';
import type { KbCandidate, KnowledgeSource } from '../src/main/engines/kb-engine.ts';
import { systemClock } from '../src/shared/clock.ts';

export interface HybridFlags {
  url: string;
  model: string;
  apiKey: string | null;
}

/** The hybrid part's flags, or null when --embeddings-url is not given; a clear error when half given. */
export function hybridFlags(argv: readonly string[]): HybridFlags | null {
  const { values } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: { 'embeddings-url': { type: 'string' }, 'embedding-model': { type: 'string' }, 'api-key-env': { type: 'string' } },
  });
  const url = values['embeddings-url'];
  const model = values['embedding-model'];
  if (url === undefined && model === undefined) return null;
  if (typeof url !== 'string' || typeof model !== 'string') throw new Error('kb-quality: give both --embeddings-url URL and --embedding-model MODEL');
  const env = values['api-key-env'];
  const apiKey = typeof env === 'string' ? (process.env[env] ?? null) : null;
  if (typeof env === 'string' && !apiKey) throw new Error(`kb-quality: --api-key-env ${env}: that environment variable is unset or empty`);
  return { url, model, apiKey };
}

interface Item {
  question: string;
  expected: string | null;
  kind: 'paraphrase' | 'uncovered';
  split: 'dev' | 'held-out' | 'fresh';
  lang: 'en' | 'zh';
}
interface Judged {
  item: Item;
  best: { question: string; score: number } | null;
  rank: number | null;
}
interface Figures {
  para: number;
  top1: number;
  top5: number;
  wrongPara: number;
  unc: number;
  wrongUnc: number;
}

/** What kb-quality.ts already has: its entries, questions, index, lexical judgements and scoring. */
export interface LexicalRun {
  entries: ReadonlyArray<{ id: number; question: string; answer: string; phrasings?: readonly string[] }>;
  items: readonly Item[];
  index: KnowledgeSource;
  threshold: number;
  lexical: readonly Judged[];
  sameAnswer: (a: string, b: string | null) => boolean;
  figures: (judged: readonly Judged[], threshold: number) => Figures;
}

const pct = (n: number, of: number): string => (of === 0 ? '–' : `${((100 * n) / of).toFixed(1)} %`);

export async function runKbQualityHybrid(flags: HybridFlags, run: LexicalRun): Promise<string> {
  const logs: string[] = [];
  const semantic = createSemantic({
    knowledge: run.index,
    access: {
      entries: () => run.entries.map((e) => ({ ...e, phrasings: e.phrasings ?? [] })),
      version: () => new Uint8Array([1]),
      stored: () => [],
      save: () => {},
    },
    clock: systemClock,
    log: (line) => logs.push(line),
  });
  try {
    const started = performance.now();
    const rank = semantic.rankerFor(flags.url, flags.model, flags.apiKey);
    const vectors = semantic.vectorsOf(flags.model)!;
    vectors.snapshot();
    await vectors.idle();
    const failure = vectors.failure();
    if (failure) return `kb-quality, hybrid: the knowledge base could not be embedded with ${flags.model} at ${flags.url}: ${failure}`;
    const embedMs = performance.now() - started;
    const judged: Judged[] = [];
    const causes = new Set<string>();
    let queryMs = 0;
    for (const item of run.items) {
      const t = performance.now();
      const { ranked, cause } = await rank([item.question], 5, new AbortController().signal);
      queryMs += performance.now() - t;
      if (cause) causes.add(cause);
      const at = ranked.findIndex((r: { entry: KbCandidate }) => run.sameAnswer(r.entry.question, item.expected));
      judged.push({ item, best: ranked[0] ? { question: ranked[0].entry.question, score: ranked[0].score } : null, rank: at >= 0 ? at + 1 : null });
    }
    const lines: string[] = [];
    lines.push(`kb-quality, hybrid (words and meaning): embedding model ${flags.model} at ${flags.url}; ${run.entries.length} entries embedded in ${Math.round(embedMs)} ms, ${(queryMs / run.items.length).toFixed(1)} ms per question ranked`);
    if (causes.size > 0) lines.push(`fell back to words for some questions: ${[...causes].slice(0, 3).join('; ')}`);
    lines.push('');
    lines.push(`| slice | top-1 right, lexical → hybrid | top 5, lexical → hybrid | uncovered answered, lexical → hybrid | paraphrases wrong, lexical → hybrid |`);
    lines.push('|---|---:|---:|---:|---:|');
    const slices: Array<[string, (j: Judged) => boolean]> = [
      ['all', () => true],
      ['held-out', (j) => j.item.split === 'held-out'],
      ['fresh (written blind)', (j) => j.item.split === 'fresh'],
      ['English', (j) => j.item.lang === 'en'],
      ['Chinese', (j) => j.item.lang === 'zh'],
    ];
    for (const [name, keep] of slices) {
      const l = run.figures(run.lexical.filter(keep), run.threshold);
      const h = run.figures(judged.filter(keep), run.threshold);
      lines.push(
        `| ${name} | ${pct(l.top1, l.para)} → ${pct(h.top1, h.para)} | ${pct(l.top5, l.para)} → ${pct(h.top5, h.para)} | ${pct(l.wrongUnc, l.unc)} → ${pct(h.wrongUnc, h.unc)} | ${pct(l.wrongPara, l.para)} → ${pct(h.wrongPara, h.para)} |`,
      );
    }
    lines.push('');
    lines.push('| threshold | hybrid top-1 right | uncovered answered anyway |');
    lines.push('|---:|---:|---:|');
    for (let t = 0.3; t <= 0.801; t += 0.05) {
      const f = run.figures(judged, t);
      lines.push(`| ${t.toFixed(2)}${Math.abs(t - run.threshold) < 1e-9 ? ' (default)' : ''} | ${pct(f.top1, f.para)} | ${pct(f.wrongUnc, f.unc)} |`);
    }
    return lines.join('\n');
  } finally {
    semantic.close();
  }
}

import type { ConsoleHandlers, KbCurve } from '../../shared/console-api.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Store } from '../store/index.ts';
import type { KnowledgeSource } from '../engines/kb-engine.ts';
import { CURVE_THRESHOLDS, answeredShares, judgeQuestions, parseLabelledQuestions, tradeOffAt, type Judged } from '../engines/kb-evaluate.ts';
import { ImportError } from '../cli/kb-import.ts';
import { ConsoleError } from './console-error.ts';

export interface KbCurveDeps {
  store: Store;
  clock: Clock;
  /** The knowledge base as the built-in engine matches it (rebuilt when an entry changes). */
  knowledge: KnowledgeSource;
  kbThreshold: number;
}

/** Recent questions counted: enough for a smooth curve, few enough to rank in well under a second. */
const RECENT_LIMIT = 500;
/** Questions ranked between yields to the event loop, so other consoles and requests go on. */
const SLICE = 25;

const DAY = 86_400_000;
const yieldToOthers = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function bestScores(knowledge: KnowledgeSource, questions: readonly string[]): Promise<number[]> {
  const scores: number[] = [];
  for (let i = 0; i < questions.length; i++) {
    if (i > 0 && i % SLICE === 0) await yieldToOthers();
    scores.push(knowledge.rank([questions[i]!], 1)[0]?.score ?? 0);
  }
  return scores;
}

/** The knowledge-base view's threshold plot: what each threshold would answer. */
export function createKbCurveHandler(deps: KbCurveDeps): Pick<ConsoleHandlers, 'kbCurve'> {
  return {
    async kbCurve(input): Promise<KbCurve> {
      let labelled: KbCurve['labelled'] = null;
      if (input.labelled) {
        let items;
        try {
          items = parseLabelledQuestions(input.labelled.fileName, input.labelled.text, new Set(deps.store.kb.all().map((e) => e.question)));
        } catch (error) {
          if (error instanceof ImportError) throw new ConsoleError('invalid_input', `${input.labelled.fileName}: ${error.message}`);
          throw error;
        }
        const judged: Judged[] = [];
        for (let i = 0; i < items.length; i += SLICE) {
          judged.push(...judgeQuestions(deps.knowledge, items.slice(i, i + SLICE)));
          await yieldToOthers();
        }
        labelled = { fileName: input.labelled.fileName, questions: items.length, points: CURVE_THRESHOLDS.map((t) => tradeOffAt(judged, t)) };
      }
      const to = deps.clock.now();
      const questions = deps.store.replay.questions({ from: to - input.days * DAY, to, clientId: null, limit: RECENT_LIMIT }).map((q) => q.content);
      const scores = await bestScores(deps.knowledge, questions);
      return { threshold: deps.kbThreshold, recent: { days: input.days, questions: questions.length, points: answeredShares(scores) }, labelled };
    },
  };
}

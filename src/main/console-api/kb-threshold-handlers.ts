import type { ConsoleHandlers, KbCurve } from '../../shared/console-api.ts';
import type { Clock } from '../../shared/clock.ts';
import type { StoreContract } from '../store/contract.ts';
import type { KnowledgeSource } from '../engines/kb-engine.ts';
import { CURVE_THRESHOLDS, answeredShares, judgeQuestions, parseLabelledQuestions, tradeOffAt, type Judged } from '../engines/kb-evaluate.ts';
import { ImportError } from '../cli/kb-import.ts';
import { ConsoleError } from './console-error.ts';
import type { MessageWriter } from '../conversations/message-service.ts';
import type { Caller } from '../../shared/console-roles.ts';
import { KB_THRESHOLD_SETTING } from '../engines/kb-threshold.ts';
import { auditDetail } from '../conversations/workspace-commands.ts';

export interface KbCurveDeps {
  store: { readonly settings: Pick<StoreContract['settings'], 'put' | 'delete'>; readonly kb: Pick<StoreContract['kb'], 'all'>; readonly replay: Pick<StoreContract['replay'], 'questions'> };
  clock: Clock;
  /** The knowledge base as the built-in engine matches it (rebuilt when an entry changes). */
  knowledge: KnowledgeSource;
  /** The threshold in force now, and the server's configured one (the default to go back to). */
  kbThreshold: () => number;
  configuredKbThreshold: number;
  writer: MessageWriter;
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

/** The knowledge-base view's threshold plot (what each threshold would answer), and setting the threshold. */
export function createKbThresholdHandlers(deps: KbCurveDeps): Pick<ConsoleHandlers, 'kbCurve' | 'setKbThreshold'> {
  const audit = async (caller: Caller, detail: Record<string, unknown>): Promise<void> => {
    const operator = caller.account ? { ...caller.account, address: caller.address } : null;
    await deps.writer.submit({ kind: 'audit', entry: { at: deps.clock.now(), operator, action: 'kb_threshold', conversationId: null, detail: auditDetail(detail), address: caller.address } });
  };
  return {
    /** Every engine thread and process reads the settings row at its next question: no restart. */
    async setKbThreshold(input, caller) {
      const from = deps.kbThreshold();
      if (input.threshold === null) await deps.store.settings.delete(KB_THRESHOLD_SETTING);
      else await deps.store.settings.put(KB_THRESHOLD_SETTING, String(input.threshold));
      const to = deps.kbThreshold();
      await audit(caller, { from, to, ...(input.threshold === null ? { default: true } : {}) });
      return { threshold: to, defaultThreshold: deps.configuredKbThreshold };
    },
    async kbCurve(input): Promise<KbCurve> {
      let labelled: KbCurve['labelled'] = null;
      if (input.labelled) {
        let items;
        try {
          items = parseLabelledQuestions(input.labelled.fileName, input.labelled.text, new Set((await deps.store.kb.all()).map((e) => e.question)));
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
      const questions = (await deps.store.replay.questions({ from: to - input.days * DAY, to, clientId: null, limit: RECENT_LIMIT })).map((q) => q.content);
      const scores = await bestScores(deps.knowledge, questions);
      const threshold = deps.kbThreshold();
      const answeredNow = scores.length === 0 ? 0 : scores.filter((s) => s >= threshold).length / scores.length;
      return { threshold, defaultThreshold: deps.configuredKbThreshold, recent: { days: input.days, questions: questions.length, answeredNow, points: answeredShares(scores) }, labelled };
    },
  };
}

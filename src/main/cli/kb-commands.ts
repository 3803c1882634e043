import { readFileSync } from 'node:fs';
import type { KbCliStore } from '../store/contract.ts';
import type { Store } from '../store/index.ts';
import { parsePairs } from './kb-import.ts';
import { UsageError } from './args.ts';

export function sqliteKbCliStore(store: Store): KbCliStore {
  return {
    add: (question, answer, now) => store.kb.add(question, answer, now),
    addAll: (pairs, now) =>
      store.transaction(() => {
        for (const p of pairs) store.kb.add(p.question, p.answer, now, p.phrasings);
      }),
    list: (limit) => store.kb.list(limit),
  };
}

export async function kbCommand(store: KbCliStore, now: number, args: string[], flags: { question?: string; answer?: string }): Promise<string> {
  const [action, file] = args;
  switch (action) {
    case 'add': {
      const question = flags.question?.trim();
      const answer = flags.answer?.trim();
      if (!question || !answer) throw new UsageError('kb add needs --question and --answer, both non-empty');
      return `entry ${await store.add(question, answer, now)} added`;
    }
    case 'import': {
      if (!file) throw new UsageError('kb import needs a FILE');
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
      }
      const pairs = parsePairs(file, text);
      // All or nothing: a file with one bad line leaves the knowledge base as it was.
      await store.addAll(pairs, now);
      return `imported ${pairs.length} entr${pairs.length === 1 ? 'y' : 'ies'} from ${file}`;
    }
    case 'list': {
      const entries = await store.list(10_000);
      if (entries.length === 0) return 'the knowledge base is empty: add entries with "kb add" or "kb import"';
      return entries.map((e) => `${e.id}\t${e.question}\t${e.answer.replace(/\s+/g, ' ').slice(0, 80)}`).join('\n');
    }
    default:
      throw new UsageError(`unknown kb command "${action ?? ''}"; use add, import or list`);
  }
}

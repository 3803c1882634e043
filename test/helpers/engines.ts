import type { Engine, EngineAnswer, EngineRequest } from '../../src/main/engines/engine.ts';

/** An engine tests steer: it answers with the last customer line, and can be held mid-call. */
export function scriptedEngine() {
  const calls: EngineRequest[] = [];
  let held: Array<() => void> = [];
  let holding = false;
  let answerWith: (r: EngineRequest) => EngineAnswer = (r) => {
    const last = r.context.filter((l) => l.role === 'customer').at(-1)?.content ?? '';
    return { content: `answer to: ${last}`, handoff: false, confidence: 1, sources: [] };
  };
  const engine: Engine = {
    name: 'scripted',
    async answer(request) {
      calls.push(request);
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      return answerWith(request);
    },
  };
  return {
    engine,
    calls,
    hold(): void {
      holding = true;
    },
    release(): void {
      holding = false;
      const waiting = held;
      held = [];
      for (const r of waiting) r();
    },
    waiting: () => held.length,
    answer(fn: (r: EngineRequest) => EngineAnswer): void {
      answerWith = fn;
    },
  };
}

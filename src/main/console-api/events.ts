import type { ConsoleEvent } from '../../shared/console-api.ts';

/** Fan-out of live events to every open console (SSE streams, Electron windows). */
export function createEventBus() {
  const listeners = new Set<(event: ConsoleEvent) => void>();
  return {
    emit(event: ConsoleEvent): void {
      for (const l of listeners) l(event);
    },
    subscribe(listener: (event: ConsoleEvent) => void): () => void {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    get size() {
      return listeners.size;
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;

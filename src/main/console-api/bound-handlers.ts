import type { ConsoleHandlers, ConsoleMethod, ConsoleOutputs, ParsedInput } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';

/** The console handlers with their caller fixed: what code in the same process calls (tests, the desktop shell). */
export type OwnerHandlers = { [M in ConsoleMethod]: (input: ParsedInput<M>) => Promise<ConsoleOutputs[M]> };

/** `caller`: read at each call (the owner's name can change), from a store whose reads may be promises. */
export function boundTo(handlers: ConsoleHandlers, caller: () => Caller | Promise<Caller>): OwnerHandlers {
  return new Proxy({} as OwnerHandlers, {
    get: (_, method) => {
      const handler = handlers[method as ConsoleMethod] as ((input: unknown, caller: Caller) => Promise<unknown>) | undefined;
      return handler ? async (input: unknown) => handler(input, await caller()) : undefined;
    },
  });
}

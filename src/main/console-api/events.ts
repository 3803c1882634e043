import type { ConsoleEvent } from '../../shared/console-api.ts';
import type { Caller } from '../../shared/console-roles.ts';

/**
 * Whether a console signed in as `caller` gets `event`: an event with recipients (team mode's
 * alerts, assignments, mentions) goes only to those accounts' consoles; a request's outcome only
 * to admins; the rest go to every one.
 */
export function isFor(event: ConsoleEvent, caller: Pick<Caller, 'account' | 'role'>): boolean {
  // The endpoint's requests (status, code) are the request log's, an admin's view.
  if (event.type === 'request') return caller.role === 'admin';
  const recipients = 'recipients' in event ? event.recipients : undefined;
  return recipients === undefined || (caller.account !== null && recipients.includes(caller.account.id));
}

export interface Subscription {
  /** Who the console is: events are filtered for them (read at each event: the owner's name and id can change). */
  caller?: Caller | (() => Caller);
  /** An event stream of a console in a browser (presence counts it as a sign of life while it is open). */
  stream?: boolean;
}

/** Fan-out of live events to every open console (SSE streams, Electron windows). */
export function createEventBus() {
  const listeners = new Set<{ listener: (event: ConsoleEvent) => void; caller: (() => Caller) | null }>();
  const streamWatchers = new Set<(accountId: string) => () => void>();
  const observers = new Set<(event: ConsoleEvent) => void>();
  const remoteObservers = new Set<(event: ConsoleEvent, from: string) => void>();
  const toConsoles = (event: ConsoleEvent): void => {
    for (const l of listeners) if (!l.caller || isFor(event, l.caller())) l.listener(event);
  };
  return {
    emit(event: ConsoleEvent): void {
      toConsoles(event);
      for (const observe of observers) observe(event);
    },
    /**
     * An event that happened elsewhere (node `from`): to this process's consoles and to
     * `onDeliver`'s observers, not to `onEmit`'s (the relay), or it would go back.
     */
    deliver(event: ConsoleEvent, from = ''): void {
      toConsoles(event);
      for (const observe of remoteObservers) observe(event, from);
    },
    /** `observe` sees each event another node sent, with that node's id (the team's presence across nodes). */
    onDeliver(observe: (event: ConsoleEvent, from: string) => void): () => void {
      remoteObservers.add(observe);
      return () => void remoteObservers.delete(observe);
    },
    /** `observe` sees each event emitted in this process after its consoles got it (the relay to other nodes). */
    onEmit(observe: (event: ConsoleEvent) => void): () => void {
      observers.add(observe);
      return () => void observers.delete(observe);
    },
    subscribe(listener: (event: ConsoleEvent) => void, options: Subscription = {}): () => void {
      const given = options.caller;
      const entry = { listener, caller: given === undefined ? null : typeof given === 'function' ? given : () => given };
      listeners.add(entry);
      const account = options.stream ? entry.caller?.().account : null;
      const closers = account ? [...streamWatchers].map((watch) => watch(account.id)) : [];
      return () => {
        listeners.delete(entry);
        for (const close of closers) close();
      };
    },
    /** `watch` is told of each account's event stream as it opens, and returns what to do when it closes. */
    watchStreams(watch: (accountId: string) => () => void): () => void {
      streamWatchers.add(watch);
      return () => void streamWatchers.delete(watch);
    },
    get size() {
      return listeners.size;
    },
  };
}

export type EventBus = ReturnType<typeof createEventBus>;

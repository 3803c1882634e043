import type { StateCreator } from 'zustand';
import type { StreamState } from '../api/bridge.ts';
import type { ConsoleState } from './index.ts';

export interface ConnectionSlice {
  /** The live stream to the service; the desktop window's IPC is always live. */
  connection: { state: StreamState; since: number };
  setConnection(state: StreamState, since: number): void;
}

type Slice<T> = StateCreator<ConsoleState, [], [], T>;

export const connectionSlice: Slice<ConnectionSlice> = (set) => ({
  connection: { state: 'connecting', since: Date.now() },
  setConnection: (state, since) => set({ connection: { state, since } }),
});

/** Writes need the service: while the stream is down they would fail, or land unseen. */
export function canWrite(state: StreamState): boolean {
  return state === 'live' || state === 'connecting';
}

/**
 * What bench/team's processes say to each other (over fork's IPC), and the clock they share:
 * process.hrtime is the machine's monotonic clock, so a send time taken in the ingest driver and an
 * arrival time taken in the consoles process can be subtracted (performance.now() cannot: each
 * process counts from its own start).
 */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export type ConsolesCommand =
  | { type: 'open'; origin: string; tokens: string[] }
  /** Each message's conversation id and when its request was sent. */
  | { type: 'close'; sends: Array<[string, number]> }
  | { type: 'exit' };

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface FanOut {
  /** (message, console) pairs whose event arrived. */
  pairs: number;
  /** (message, console) pairs whose event never arrived before the streams closed. */
  missing: number;
  /** Request sent → event read, over every (message, console) pair. */
  each: Spread;
  /** Request sent → event read by the last of the consoles, per message. */
  allConsoles: Spread;
  /** Events read, by type, over all streams. */
  events: Record<string, number>;
  bytes: number;
  /** The consoles process's own event-loop delay beyond 10 ms (ms): its share of the delays. */
  clientLoopP99: number;
  clientLoopMax: number;
}

export type ConsolesReply = { type: 'opened'; count: number } | { type: 'failed'; error: string } | { type: 'closed'; fanOut: FanOut };

export type DriverCommand = { type: 'run'; endpoint: string; bodiesFile: string; rate: number; seconds: number; sockets: number };

export interface Sent {
  conversationId: string | null;
  sentAt: number;
  /** Answer received − due time (ms): open loop, so time queued behind a slow server counts. */
  latency: number;
  status: number;
}

export type DriverReply = { type: 'done'; sent: Sent[]; late: number; durationMs: number };

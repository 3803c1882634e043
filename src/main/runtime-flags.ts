/**
 * Memory bounds for the service's V8 heaps (issue 12: main-process RSS < 250 MB on a
 * million-message store). V8 grows each young generation up to 64 MB under allocation pressure
 * and keeps it: with the main thread and three workers that alone was ~100 MB more RSS after an
 * hour of console use. Short-lived garbage is what these threads make (request bodies, rows, JSON),
 * so small young generations cost a few more scavenges and no measurable throughput. Measured on
 * the 1M-entry store after 80 s of replayed console use: 266 MB by default, 208 MB with these.
 */

/** Node/V8 flags for the process that runs the service (headless `node …` or Electron's `--js-flags`). */
export const MAIN_V8_FLAGS = ['--max-semi-space-size=1'] as const;

/** `resourceLimits` for the writer, engine and console read threads. */
export const WORKER_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 2 } as const;

import { z } from 'zod';
import { systemClock, type Clock } from '../../../shared/clock.ts';
import { EmbeddingsError } from './embeddings-error.ts';
import { normalized } from './vector-math.ts';

/** An OpenAI-compatible embeddings endpoint: `POST {baseUrl}/embeddings` (Ollama, llama.cpp, vLLM, hosted APIs). */
export interface EmbeddingsConfig {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  /** Per HTTP attempt. */
  timeoutMs: number;
  /** More attempts after a time-out, a refused connection, 429 or 5xx. */
  retries: number;
  /** Texts per request: servers cap a request's inputs (and a local model's memory does). */
  batchSize: number;
}

export const DEFAULT_EMBEDDINGS: Pick<EmbeddingsConfig, 'timeoutMs' | 'retries' | 'batchSize'> = { timeoutMs: 30_000, retries: 3, batchSize: 32 };

export interface EmbedOptions {
  /** Overrides the config's, e.g. one short attempt for a customer's question. */
  timeoutMs?: number;
  retries?: number;
}

export interface EmbeddingsClient {
  readonly model: string;
  /** Unit vectors, one per text in order, all of one length; EmbeddingsError otherwise. */
  embed(texts: readonly string[], signal: AbortSignal, options?: EmbedOptions): Promise<Float32Array[]>;
}

export interface EmbeddingsDeps {
  /** Time-outs run on it. */
  clock?: Clock;
  /** Waits between attempts; tests record them and go on at once. Default: the clock. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

// `index` says which input a vector is for; a few servers leave it out and answer in order.
const responseSchema = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()).min(1), index: z.number().int().min(0).optional() })),
});

/** Waits `ms` on the clock, or until the signal aborts. */
function wait(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(new EmbeddingsError('aborted', 'embeddings request aborted'));
    };
    const cancel = clock.after(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const snippet = (text: string): string => {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
};

export function createEmbeddingsClient(config: EmbeddingsConfig, deps: EmbeddingsDeps = {}): EmbeddingsClient {
  const clock = deps.clock ?? systemClock;
  const sleep = deps.sleep ?? ((ms: number, signal: AbortSignal) => wait(clock, ms, signal));
  const url = `${config.baseUrl.replace(/\/+$/, '')}/embeddings`;

  async function attempt(input: readonly string[], signal: AbortSignal, timeoutMs: number): Promise<Float32Array[]> {
    const timeout = new AbortController();
    const cancel = clock.after(timeoutMs, () => timeout.abort());
    const failed = (error: unknown, otherwise: EmbeddingsError): EmbeddingsError => {
      if (signal.aborted) return new EmbeddingsError('aborted', 'embeddings request aborted');
      if (timeout.signal.aborted) return new EmbeddingsError('timeout', `embeddings timed out: no answer within ${timeoutMs} ms`, true);
      return otherwise;
    };
    try {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) },
          body: JSON.stringify({ model: config.model, input }),
          signal: AbortSignal.any([signal, timeout.signal]),
        });
      } catch (error) {
        throw failed(error, new EmbeddingsError('unreachable', `cannot reach ${config.baseUrl}: ${(error as Error).message}`, true));
      }
      let text: string;
      try {
        text = await res.text();
      } catch (error) {
        throw failed(error, new EmbeddingsError('unreachable', `embeddings answer cut off: ${(error as Error).message}`, true));
      }
      if (res.status === 429 || res.status >= 500) {
        const after = Number(res.headers.get('retry-after'));
        throw new EmbeddingsError('http', `embeddings: HTTP ${res.status}${text ? ` (${snippet(text)})` : ''}`, true, Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 10_000) : null);
      }
      if (res.status === 401 || res.status === 403) throw new EmbeddingsError('auth', `embeddings: HTTP ${res.status}, the API key was refused (check the engine's key)`);
      if (!res.ok) {
        throw new EmbeddingsError('http', `embeddings: HTTP ${res.status} from ${url} (check the base URL and that model "${config.model}" is there)${text ? `: ${snippet(text)}` : ''}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new EmbeddingsError('malformed', `embeddings: the answer is not JSON (${snippet(text) || 'empty'}); is ${config.baseUrl} an OpenAI-compatible API?`);
      }
      return vectorsOf(body, input.length);
    } finally {
      cancel();
    }
  }

  function vectorsOf(body: unknown, count: number): Float32Array[] {
    const parsed = responseSchema.safeParse(body);
    if (!parsed.success) throw new EmbeddingsError('malformed', `embeddings: the answer has no data[].embedding list of numbers (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    const { data } = parsed.data;
    if (data.length !== count) throw new EmbeddingsError('malformed', `embeddings: ${data.length} vectors for ${count} texts`);
    const out: Array<Float32Array | undefined> = new Array(count);
    data.forEach((d, position) => {
      const at = d.index ?? position;
      if (at >= count || out[at]) throw new EmbeddingsError('malformed', `embeddings: data[${position}].index ${at} is out of range or repeated`);
      if (d.embedding.length !== data[0]!.embedding.length) {
        throw new EmbeddingsError('dims', `embeddings: vectors of ${data[0]!.embedding.length} and ${d.embedding.length} dimensions in one answer`);
      }
      const v = normalized(d.embedding);
      if (!v) throw new EmbeddingsError('malformed', `embeddings: data[${position}] is a zero vector`);
      out[at] = v;
    });
    return out as Float32Array[];
  }

  async function batch(input: readonly string[], signal: AbortSignal, timeoutMs: number, retries: number): Promise<Float32Array[]> {
    for (let i = 0; ; i++) {
      try {
        return await attempt(input, signal, timeoutMs);
      } catch (error) {
        if (!(error instanceof EmbeddingsError) || !error.retryable || i >= retries) {
          if (error instanceof EmbeddingsError && i > 0) throw new EmbeddingsError(error.failure, `${error.message} (after ${i + 1} attempts)`);
          throw error;
        }
        await sleep(error.retryAfterMs ?? 500 * 2 ** i, signal);
      }
    }
  }

  return {
    model: config.model,
    async embed(texts, signal, options = {}) {
      const timeoutMs = options.timeoutMs ?? config.timeoutMs;
      const retries = options.retries ?? config.retries;
      const out: Float32Array[] = [];
      // One batch after another: a local model serves one at a time anyway.
      for (let at = 0; at < texts.length; at += config.batchSize) {
        const vectors = await batch(texts.slice(at, at + config.batchSize), signal, timeoutMs, retries);
        if (out.length > 0 && vectors[0]!.length !== out[0]!.length) {
          throw new EmbeddingsError('dims', `embeddings: vectors of ${out[0]!.length} and ${vectors[0]!.length} dimensions from one model`);
        }
        out.push(...vectors);
      }
      return out;
    },
  };
}

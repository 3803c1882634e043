/** Why an embeddings request failed, for the caller's decision (retry or not) and the trace. */
export type EmbeddingsFailure = 'timeout' | 'unreachable' | 'auth' | 'http' | 'malformed' | 'dims' | 'aborted';

export class EmbeddingsError extends Error {
  readonly failure: EmbeddingsFailure;
  readonly retryable: boolean;
  /** From a Retry-After header, in ms. */
  readonly retryAfterMs: number | null;
  constructor(failure: EmbeddingsFailure, message: string, retryable = false, retryAfterMs: number | null = null) {
    super(message);
    this.failure = failure;
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
  }
}

import type { ApiResult } from '../../shared/console-api.ts';

/** A refusal the Team server dialog shows as it is: a code for tests, a sentence for people. */
export class TeamClientError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Runs `work` and turns a TeamClientError into data, as the console API does with ConsoleError. */
export async function asResult<T>(work: () => T | Promise<T>): Promise<ApiResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    if (error instanceof TeamClientError) return { ok: false, error: { code: error.code, message: error.message } };
    throw error;
  }
}

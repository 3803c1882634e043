import { PROBLEM_CODES, problemType, type FieldError, type ProblemBody, type ProblemCode } from '../../shared/problem-codes.ts';

/** A refusal on its way to becoming an RFC 9457 response. */
export class HttpProblem extends Error {
  readonly code: ProblemCode;
  readonly errors: FieldError[] | undefined;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { errors?: FieldError[]; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.code = code;
    this.errors = options.errors;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return PROBLEM_CODES[this.code].status;
  }

  body(requestId: string): ProblemBody {
    const { status, title } = PROBLEM_CODES[this.code];
    return {
      type: problemType(this.code),
      title,
      status,
      detail: this.message,
      code: this.code,
      request_id: requestId,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extra,
    };
  }
}

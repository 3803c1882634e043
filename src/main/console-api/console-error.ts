/** A refusal the console shows as it is (unknown conversation, nothing to retry...). */
export class ConsoleError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

import type { ArrivedEntry } from '../../shared/console-team.ts';

/** A refusal the console shows as it is (unknown conversation, nothing to retry...). */
export class ConsoleError extends Error {
  readonly code: string;
  /** conversation_changed: what arrived after the draft's base (it crosses to the console with the error). */
  readonly arrived: ArrivedEntry[] | undefined;
  constructor(code: string, message: string, details: { arrived?: ArrivedEntry[] } = {}) {
    super(message);
    this.code = code;
    this.arrived = details.arrived;
  }
}

/**
 * Every error code of the wire protocol (section 8) with its HTTP status and title.
 * Codes are part of the contract: integrators switch on them, so they never change.
 */
export const PROBLEM_CODES = {
  bad_request: { status: 400, title: 'Malformed HTTP request' },
  invalid_json: { status: 400, title: 'Body is not valid JSON' },
  validation_failed: { status: 400, title: 'Request failed validation' },
  unknown_field: { status: 400, title: 'Unknown top-level field' },
  field_not_allowed: { status: 400, title: 'Field not allowed for this event_type' },
  missing_sender: { status: 400, title: 'Sender missing' },
  mixed_payload: { status: 400, title: 'Mixed payload' },
  unknown_command: { status: 400, title: 'Unknown command' },
  send_url_not_allowed: { status: 400, title: 'send_url not allowed' },
  unknown_client: { status: 401, title: 'Unknown client' },
  timestamp_out_of_range: { status: 401, title: 'Timestamp out of range' },
  invalid_signature: { status: 401, title: 'Invalid signature' },
  client_disabled: { status: 403, title: 'Client disabled' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timed out' },
  replayed_request: { status: 409, title: 'Replayed request' },
  msg_id_conflict: { status: 409, title: 'msg_id already used with different content' },
  payload_too_large: { status: 413, title: 'Body too large' },
  file_too_large: { status: 413, title: 'File too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  rate_limited: { status: 429, title: 'Rate limited' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  engine_timeout: { status: 504, title: 'Engine timed out' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export interface FieldError {
  path: string;
  message: string;
}

/** RFC 9457 problem details as Switchboard sends them. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  request_id: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export function problemType(code: ProblemCode): string {
  return `urn:switchboard:error:${code}`;
}

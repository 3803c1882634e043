import { request } from 'node:http';

export type HeldAnswer = { status: number; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> } | { error: string };

export interface HeldRequest {
  /** Sends the last byte: the server can read the body and answer. */
  finish(): void;
  /** The answer, or the error code (ECONNRESET, …) if the connection failed instead. */
  response: Promise<HeldAnswer>;
}

/**
 * A POST sent on its own connection but for the last byte of its body: the server has taken the
 * request (counts it in flight) and waits for the rest until `finish()`. Holds a request at a
 * known point, from outside the process.
 */
export function holdRequest(url: string, body: string): HeldRequest {
  const bytes = Buffer.from(body);
  const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': bytes.length } });
  const response = new Promise<HeldAnswer>((resolve) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
  req.write(bytes.subarray(0, -1));
  return { finish: () => req.end(bytes.subarray(-1)), response };
}

/** The `switchboard_http_in_flight` gauge of a /metrics text (section 1). */
export function inFlightGauge(metrics: string): number {
  return Number(/^switchboard_http_in_flight (\d+)$/m.exec(metrics)?.[1] ?? NaN);
}

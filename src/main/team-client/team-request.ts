import { request } from 'node:https';
import { certificateVerdict, VERIFY_REFUSE } from './certificate-decision.ts';
import { openTls, type ProbeOptions } from './certificate-probe.ts';
import { TeamClientError } from './team-client-error.ts';
import type { Pins } from './pin-store.ts';
import type { TeamServerAddress } from './team-url.ts';

/**
 * One console API call from the main process to the team server (sign-out from the menu), over a
 * connection whose certificate passed the same verdict as the window's: the token is written only
 * after that.
 */
export async function teamApiCall(address: TeamServerAddress, method: string, token: string, pins: Pins, options: ProbeOptions = {}): Promise<{ status: number; body: unknown }> {
  const { socket, facts } = await openTls(address, options);
  const verdict = certificateVerdict(address.host, facts.fingerprint, facts.publiclyTrusted, pins);
  if (verdict.result === VERIFY_REFUSE) {
    socket.destroy();
    throw new TeamClientError('certificate_refused', verdict.refusal ?? 'the certificate was refused');
  }
  return new Promise((resolve, reject) => {
    const req = request(
      { host: address.host, port: address.port, method: 'POST', path: `/api/${method}`, createConnection: () => socket, headers: { host: new URL(address.origin).host, 'content-type': 'application/json', authorization: `Bearer ${token}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          socket.destroy();
          let body: unknown = null;
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('error', (error) => reject(new TeamClientError('unreachable', `the team server did not answer: ${error.message}`)));
    req.end('{}');
  });
}

import { join } from 'node:path';
import { z } from 'zod';
import type { ApiResult } from '../../shared/console-api.ts';
import type { TeamConnected, TeamServerProbe } from '../../shared/team-ipc.ts';
import { certificateVerdict, decideConnect, pinOf, trustOf } from './certificate-decision.ts';
import { probeCertificate, type ProbeOptions } from './certificate-probe.ts';
import { createPinStore } from './pin-store.ts';
import { createSessionStore, type SessionKeychain } from './session-store.ts';
import { asResult, TeamClientError } from './team-client-error.ts';
import { teamApiCall } from './team-request.ts';
import { parseTeamServerUrl } from './team-url.ts';
import { readJsonFile, writeJsonFile } from './json-file.ts';

export const SERVER_FILE = 'team-server.json';

const serverFile = z.object({ origin: z.string().url(), active: z.boolean() });

export interface TeamClientDeps {
  dataDir: string;
  keychain: SessionKeychain;
  /** Trust anchors and time-out of the certificate checks (tests trust their own throwaway authority). */
  probe?: ProbeOptions;
}

/**
 * The desktop side of "Connect to a team server", without Electron: checking a server, the
 * confirmed certificates, the connected server and its session token, sign-out. The shell
 * (team-shell.ts) turns its answers into windows.
 */
export function createTeamClient(deps: TeamClientDeps) {
  const pins = createPinStore(deps.dataDir);
  const sessions = createSessionStore(deps.dataDir, deps.keychain);
  const serverPath = join(deps.dataDir, SERVER_FILE);
  const server = (): z.infer<typeof serverFile> | null => readJsonFile(serverPath, serverFile);

  async function check(url: string): Promise<TeamServerProbe> {
    const address = parseTeamServerUrl(url);
    const facts = await probeCertificate(address, deps.probe);
    const all = pins.all();
    return {
      origin: address.origin,
      host: address.host,
      fingerprint: facts.fingerprint,
      trust: trustOf(address.host, facts.fingerprint, facts.publiclyTrusted, all),
      selfSigned: facts.selfSigned,
      problem: facts.problem,
      pinned: pinOf(all, address.host),
      subject: facts.subject,
      validTo: facts.validTo,
    };
  }

  return {
    /** The dialog's "Check": the certificate's fingerprint and whether it is trusted. */
    probe(url: string): Promise<ApiResult<TeamServerProbe>> {
      return asResult(() => check(url));
    },

    /**
     * The dialog's "Connect": checks again (the certificate may have changed since), pins a
     * confirmed self-signed certificate, remembers the server; the shell then opens its window.
     */
    connect(url: string, confirmed: string | null): Promise<ApiResult<TeamConnected & { url: string }>> {
      return asResult(async () => {
        const probe = await check(url);
        const decision = decideConnect(probe, confirmed);
        if (!decision.ok) throw new TeamClientError(decision.code, decision.message);
        if (decision.pin !== null) pins.pin(probe.host, decision.pin);
        writeJsonFile(serverPath, { origin: probe.origin, active: true });
        return { origin: probe.origin, url: parseTeamServerUrl(url).url };
      });
    },

    /** A replaced certificate, on the user's word: the host is checked as new from then on. */
    forget(url: string): Promise<ApiResult<{ forgotten: boolean }>> {
      return asResult(() => ({ forgotten: pins.forget(parseTeamServerUrl(url).host) }));
    },

    /** The server the app opens at start, or null for this computer's own service. */
    activeServer(): string | null {
      const s = server();
      return s?.active ? s.origin : null;
    },

    /** "Use this computer's own service": the session is kept for coming back; the app opens its own service from now on. */
    useThisComputer(): void {
      const s = server();
      if (s) writeJsonFile(serverPath, { ...s, active: false });
    },

    /** What Electron's certificate check of the remote window's session is answered (certificate-decision.ts). */
    verdict(host: string, fingerprint: string, chromiumTrusts: boolean): { result: number; refusal: string | null } {
      return certificateVerdict(host, fingerprint, chromiumTrusts, pins.all());
    },

    saveSession(origin: string, token: string): Promise<ApiResult<{ remembered: boolean }>> {
      return asResult(() => {
        sessions.save(origin, token);
        return { remembered: true };
      });
    },
    loadSession(origin: string): string | null {
      return sessions.load(origin);
    },
    clearSession(): void {
      sessions.clear();
    },

    /**
     * "Sign out": ends the kept session on the server (console method signOut, over a connection
     * whose certificate passed the verdict), then forgets it here. Forgotten here even when the
     * server cannot be reached: the user asked to be signed out of this computer.
     */
    signOut(origin: string): Promise<ApiResult<{ signedOut: boolean }>> {
      return asResult(async () => {
        const token = sessions.load(origin);
        sessions.clear();
        if (token === null) return { signedOut: false };
        const answer = await teamApiCall(parseTeamServerUrl(origin), 'signOut', token, pins.all(), deps.probe);
        return { signedOut: answer.status === 200 };
      });
    },
  };
}

export type TeamClient = ReturnType<typeof createTeamClient>;

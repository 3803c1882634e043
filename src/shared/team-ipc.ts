import type { ApiResult } from './console-api.ts';

/**
 * The desktop app's "Connect to a team server" (protocol v1.2, section 9, team mode): what the
 * local console window, the remote console window and the main process say to each other over IPC.
 * The local window checks a server and connects; the remote window (the team server's own page)
 * may only keep, read and forget its session token and switch back to this computer's service.
 */
export const TEAM_IPC = {
  /** Local window → main: check a server's certificate. */
  probe: 'switchboard:team:probe',
  /** Local window → main: connect (after confirming a self-signed certificate's fingerprint). */
  connect: 'switchboard:team:connect',
  /** Local window → main: forget a host's confirmed certificate (it was replaced on purpose). */
  forget: 'switchboard:team:forget',
  /** Main → local window: open the Team server dialog (menu item), with a message to show, if any. */
  openDialog: 'switchboard:team:open-dialog',
  /** Remote window → main: keep the session token (encrypted), read it (synchronously, at load), forget it. */
  saveSession: 'switchboard:team:session-save',
  loadSession: 'switchboard:team:session-load',
  clearSession: 'switchboard:team:session-clear',
  /** Remote window → main: back to this computer's own service. */
  useThisComputer: 'switchboard:team:use-this-computer',
} as const;

/**
 * What the certificate check found. `public`: valid for the name against this computer's
 * certificate authorities; `pinned`: the fingerprint the user confirmed before; `unverified`: not
 * publicly trusted (self-signed), to be confirmed by its fingerprint; `changed`: a host with a
 * confirmed certificate now shows another one: refused.
 */
export type CertificateTrust = 'public' | 'pinned' | 'unverified' | 'changed';

export interface TeamServerProbe {
  origin: string;
  host: string;
  fingerprint: string;
  trust: CertificateTrust;
  selfSigned: boolean;
  /** Why the certificate is not publicly trusted (Node's code, e.g. DEPTH_ZERO_SELF_SIGNED_CERT), or null. */
  problem: string | null;
  /** The fingerprint confirmed earlier for this host, or null. */
  pinned: string | null;
  subject: string;
  validTo: string;
}

export interface TeamConnected {
  origin: string;
}

/** Exposed as `window.switchboard.team` in the local desktop window only. */
export interface TeamDialogBridge {
  probe(url: string): Promise<ApiResult<TeamServerProbe>>;
  connect(url: string, fingerprint: string | null): Promise<ApiResult<TeamConnected>>;
  forget(url: string): Promise<ApiResult<{ forgotten: boolean }>>;
  /** The menu asks for the dialog, perhaps with why the last connection was refused. */
  onOpenDialog(listener: (message: string | null) => void): () => void;
}

/** Exposed as `window.switchboardTeam` in the remote console window only: nothing else reaches main. */
export interface TeamSessionBridge {
  /** The session token kept from an earlier run, read as the page loads; null when none. */
  keptSession(): string | null;
  saveSession(token: string): Promise<ApiResult<{ remembered: boolean }>>;
  clearSession(): Promise<void>;
  useThisComputer(): Promise<void>;
}

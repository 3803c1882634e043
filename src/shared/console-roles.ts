import type { ConsoleMethod } from './console-api.ts';

/** Team mode (protocol v1.2, section 9): `admin` may do everything; `agent` works conversations. */
export const ROLES = ['admin', 'agent'] as const;
export type Role = (typeof ROLES)[number];

const EVERYONE = ['admin', 'agent'] as const satisfies readonly Role[];
const ADMIN = ['admin'] as const satisfies readonly Role[];

/**
 * Who may call each console method. An agent reads, replies, resolves, stops and resumes,
 * suggests, retries a failed reply of a conversation and uses canned replies; clients, secrets,
 * engines, the request log, the audit, knowledge-base changes and server-wide views are an
 * admin's. `satisfies Record<ConsoleMethod, …>`: a method added to the contract without a line
 * here does not compile, so nothing is allowed by default.
 */
export const METHOD_ROLES = {
  status: EVERYONE,
  whoAmI: EVERYONE,
  signOut: EVERYONE,
  listConversations: EVERYONE,
  getTranscript: EVERYONE,
  getMessageInfo: EVERYONE,
  getConversations: EVERYONE,
  stopAutoReply: EVERYONE,
  resumeAutoReply: EVERYONE,
  assist: EVERYONE,
  getOperator: EVERYONE,
  sendReply: EVERYONE,
  resolveConversation: EVERYONE,
  undoResolve: EVERYONE,
  flagConversation: EVERYONE,
  markRead: EVERYONE,
  listCanned: EVERYONE,
  saveCanned: EVERYONE,
  removeCanned: EVERYONE,
  getDeliveries: EVERYONE,
  retryDelivery: EVERYONE,
  cancelDelivery: EVERYONE,
  listKb: EVERYONE,
  tryKb: EVERYONE,
  kbCurve: EVERYONE,
  stats: EVERYONE,
  listTeam: EVERYONE,
  assignConversation: EVERYONE,
  heartbeat: EVERYONE,
  addNote: EVERYONE,
  // Learning from the team: agents see and propose (and edit their own); admins decide.
  listProposals: EVERYONE,
  countProposals: EVERYONE,
  saveProposal: EVERYONE,
  approveProposals: ADMIN,
  mergeProposals: ADMIN,
  rejectProposals: ADMIN,
  setOperator: ADMIN,
  listRequests: ADMIN,
  listDeliveries: ADMIN,
  retryDeliveries: ADMIN,
  listAudit: ADMIN,
  sendTestMessage: ADMIN,
  listClients: ADMIN,
  addClient: ADMIN,
  rotateClient: ADMIN,
  setClientEnabled: ADMIN,
  updateClientSettings: ADMIN,
  saveKb: ADMIN,
  removeKb: ADMIN,
  importKb: ADMIN,
  setKbThreshold: ADMIN,
  listEngines: ADMIN,
  listAgents: ADMIN,
  addAgent: ADMIN,
  updateAgent: ADMIN,
  setAgentDisabled: ADMIN,
  resetAgent: ADMIN,
  removeAgent: ADMIN,
  // Replays read every client's past questions and may spend on LLM calls.
  estimateReplay: ADMIN,
  startReplay: ADMIN,
  getReplayRun: ADMIN,
  listReplayRuns: ADMIN,
  cancelReplay: ADMIN,
} as const satisfies Record<ConsoleMethod, readonly Role[]>;

/**
 * Who is calling a console method, as main resolved it from the transport: the desktop window and
 * the console token are the installation's owner; a session token is that agent. `account` is null
 * only for an owner who has not yet said who they are (a fresh install): actions that speak for the
 * business then ask for a name first (operator_required), as before team mode.
 */
export interface Caller {
  role: Role;
  account: { id: string; name: string } | null;
  /** The installation's owner (desktop window, console token), not a signed-in session. */
  owner: boolean;
  /** The remote address of an HTTP caller; null over IPC. */
  address: string | null;
  /** The session's digest, for sign-out; null for the owner. */
  session: string | null;
}

export function mayCall(role: Role, method: ConsoleMethod): boolean {
  return (METHOD_ROLES[method] as readonly Role[]).includes(role);
}

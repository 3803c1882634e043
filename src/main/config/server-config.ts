import { z } from 'zod';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INTAKE } from '../http/intake-budget.ts';
import { teamConfigSchema } from './team-config.ts';

export const DEFAULT_FALLBACK_TEXT = 'Thanks for your message. A member of our team will get back to you shortly.';

/** An origin only (https://host[:port]): the scheme, host and port a browser compares, nothing else. */
const httpsOrigin = z.string().superRefine((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return void ctx.addIssue({ code: 'custom', message: `"${text.slice(0, 100)}" is not a URL: give https://NAME[:PORT]` });
  }
  if (url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must start with https:// (the proxy in front terminates TLS)' });
  else if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || /[?#]|\/./.test(text.replace(/^https:\/\//, ''))) {
    ctx.addIssue({ code: 'custom', message: `must be an origin only, https://NAME[:PORT], with no path, query or fragment (got "${text.slice(0, 100)}")` });
  }
}).transform((text) => new URL(text).origin);

/** Server-wide settings: protocol defaults, overridable by <data-dir>/config.json and flags. */
export const serverConfigSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(8787),
  consolePort: z.number().int().min(0).max(65535).default(8788),
  /**
   * Team mode (section 9): the console listener's address. Loopback by default; any other address
   * needs tlsCert and tlsKey (HTTPS) or publicOrigin (a TLS proxy in front), or serve refuses to start.
   */
  consoleHost: z.string().min(1).default('127.0.0.1'),
  /**
   * The file holding the key that seals client secrets and engine keys (base64 of 32 bytes),
   * relative to the data folder; every node sharing a database needs the same key. Unset: the
   * data folder's secret.key. --secret-key-file and SWITCHBOARD_SECRET_KEY(_FILE) win over it.
   */
  secretKeyFile: z.string().min(1).optional(),
  /**
   * Where the data lives: unset, the data folder's SQLite file (the desktop default); a
   * postgres:// URL, a PostgreSQL database several nodes share (issue 30). --store and
   * SWITCHBOARD_STORE win over it.
   */
  /**
   * PostgreSQL nodes: how long a node's claim on a delivery or a due reply lasts without renewal
   * (it renews every third of it). A node that dies leaves its claims to the others after this
   * long. Unset: 60 s for deliveries, max(90 s, 3 × engineTimeoutMs) for replies.
   */
  deliveryLeaseSeconds: z.number().min(1).max(3600).optional(),
  /** PostgreSQL nodes: how long a query may wait for the server's answer before the request gets a 503 (unset: 15 s). */
  storeQueryTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  replyLeaseSeconds: z.number().min(1).max(3600).optional(),
  store: z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL (or unset for the data folder\'s SQLite file)').optional(),
  /** PEM files of the console's certificate (its chain) and private key; relative paths are from the data folder. */
  tlsCert: z.string().min(1).optional(),
  tlsKey: z.string().min(1).optional(),
  /** The https:// origin a TLS proxy in front of the console answers at; Host and Origin checks accept it. */
  publicOrigin: httpsOrigin.optional(),
  /**
   * Addresses of the proxies whose X-Forwarded-For names the caller (sign-in limits and the audit
   * go by it). Unset: loopback when publicOrigin is set (a proxy on the same machine), else none.
   */
  trustedProxies: z.array(z.ipv4().or(z.ipv6())).max(64).optional(),
  bodyLimitBytes: z.number().int().min(1024).default(10 * 1024 * 1024),
  timestampToleranceSeconds: z.number().int().min(1).default(300),
  replayWindowSeconds: z.number().int().min(1).default(600),
  rateLimit: z
    .strictObject({ perSecond: z.number().positive().default(100), burst: z.number().int().min(1).default(200) })
    .default({ perSecond: 100, burst: 200 }),
  engineTimeoutMs: z.number().int().min(100).default(30_000),
  /**
   * A customer who writes while staff hold the conversation in the IM (stop_auto_reply, or a staff
   * line's pause) and gets no answer this long puts it in Needs you, with one console alert. 0: never.
   */
  staffWaitMinutes: z.number().min(0).max(1440).default(10),
  fallbackText: z.string().min(1).max(2000).default(DEFAULT_FALLBACK_TEXT),
  kbThreshold: z.number().min(0).max(1).default(0.55),
  requestLogRetentionDays: z.number().min(1).default(30),
  /** The request log is also cut to its newest verified rows past this many (oldest first, in small batches). */
  requestLogMaxRows: z.number().int().min(1000).default(1_000_000),
  /**
   * Unverified rows (requests refused before or at authentication: anyone can send those, naming
   * any client) have a limit of their own, cut from their own oldest end: a flood of them never
   * pushes a verified row out.
   */
  requestLogMaxUnverifiedRows: z.number().int().min(100).default(100_000),
  /**
   * How long an accepted request's idempotency record is kept (section 5): a retry with the same
   * msg_id and content within this time gets the first response again; after it, the msg_id is new.
   * Retries are re-signed with a fresh timestamp, so they can come at any age: this is the promise.
   * Never below the replay window (section 3), whose signatures are these records too.
   */
  idempotencyRetentionHours: z.number().min(1).default(48),
  /**
   * Refused requests of the same kind (same address, or same client once authenticated; same status
   * and code) within a window: the first `rowsPerWindow` get a row each, the rest are counted on one.
   */
  requestLogAggregation: z
    .strictObject({
      enabled: z.boolean().default(true),
      windowSeconds: z.number().int().min(1).max(3600).default(60),
      rowsPerWindow: z.number().int().min(1).max(1000).default(5),
    })
    .default({ enabled: true, windowSeconds: 60, rowsPerWindow: 5 }),
  /**
   * Per remote address, for requests refused before or at authentication (unsigned, badly signed,
   * unknown client...): past the burst the address gets 429 before its body is read. Signed requests
   * never cost it anything. Behind a reverse proxy every request has the proxy's address: limit there.
   */
  addressRateLimit: z
    .strictObject({
      enabled: z.boolean().default(true),
      perSecond: z.number().positive().default(10),
      burst: z.number().int().min(1).default(100),
      maxAddresses: z.number().int().min(100).max(10_000_000).default(100_000),
    })
    .default({ enabled: true, perSecond: 10, burst: 100, maxAddresses: 100_000 }),
  /**
   * What requests not yet authenticated may hold: bytes of bodies as they arrive (a declared
   * Content-Length must fit when the request starts), per address and in total; open connections
   * per address; the time a body may take. Past them: 429 (the address's share) or 503 (the
   * total) with Retry-After, or 408.
   */
  intake: z
    .strictObject({
      totalBytes: z.number().int().min(1024).default(DEFAULT_INTAKE.totalBytes),
      perAddressBytes: z.number().int().min(1024).default(DEFAULT_INTAKE.perAddressBytes),
      perAddressConnections: z.number().int().min(1).max(100_000).default(DEFAULT_INTAKE.perAddressConnections),
      bodyTimeoutMs: z.number().int().min(100).max(120_000).default(DEFAULT_INTAKE.bodyTimeoutMs),
      maxConnections: z.number().int().min(1).max(1_000_000).default(DEFAULT_INTAKE.maxConnections),
    })
    .default(DEFAULT_INTAKE),
  /** A delivery attempt with no complete answer in this time is a failure to retry. */
  deliveryTimeoutMs: z.number().int().min(100).max(120_000).default(15_000),
  /** Deliveries in flight at once, across conversations (one at a time within each). */
  deliveryConcurrency: z.number().int().min(1).max(1024).default(64),
  /** How long a write waits for a lock held by another process (the CLI) before a 503. */
  busyTimeoutMs: z.number().int().min(0).max(60_000).default(5000),
  /** Answers (knowledge-base match, LLM calls) computed on their own thread with a read-only connection. */
  engineWorker: z.boolean().default(true),
  /** The console's lists, searches, transcripts and dashboard read on their own thread with a read-only connection. */
  readWorker: z.boolean().default(true),
  /**
   * Of deliveryConcurrency, at most this many deliveries in flight for one client: a receiver that
   * never answers holds half the slots for a try's time-out, not all of them (issue 27), and the
   * others' deliveries go out at once. Half rather than a quarter: a cap of 16 cost a lone client
   * (the desktop's usual case) about 15 % of its burst rate and 300 ms of burst p99.
   */
  deliveryConcurrencyPerClient: z.number().int().min(1).max(1024).default(32),
  /**
   * And at most this many to one send_url origin (scheme://host:port), whatever the client: one
   * integrator may host several clients' receivers, and a dead one shared by many clients still
   * leaves half the slots to the others.
   */
  deliveryConcurrencyPerOrigin: z.number().int().min(1).max(1024).default(32),
  /** Team workflow: auto-assignment and when an offline agent's conversations go back to the queue (team-config.ts). */
  team: teamConfigSchema,
})
  .refine((c) => c.idempotencyRetentionHours * 3600 >= c.replayWindowSeconds, {
    // A pruned record is a forgotten signature: a replay of it would be accepted again.
    message: 'must be at least the replay window (replayWindowSeconds)',
    path: ['idempotencyRetentionHours'],
  })
  .refine((c) => (c.tlsCert === undefined) === (c.tlsKey === undefined), {
    message: 'give both the certificate (tlsCert, --tls-cert) and its key (tlsKey, --tls-key), or neither',
    path: ['tlsCert'],
  })
  .refine((c) => c.intake.perAddressBytes >= c.bodyLimitBytes && c.intake.totalBytes >= c.intake.perAddressBytes, {
    // Otherwise a body within the limit could never be read from a new connection.
    message: 'perAddressBytes must be at least bodyLimitBytes, and totalBytes at least perAddressBytes',
    path: ['intake'],
  });

export type ServerConfig = z.infer<typeof serverConfigSchema>;

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env['SWITCHBOARD_DATA_DIR']) return env['SWITCHBOARD_DATA_DIR'];
  const base = env['XDG_DATA_HOME'] || join(homedir(), '.local', 'share');
  return join(base, 'switchboard');
}

export class ConfigError extends Error {}

/** Reads <dataDir>/config.json if present; flags given on the command line win over it. */
export function loadServerConfig(dataDir: string, overrides: Partial<Record<keyof ServerConfig, unknown>> = {}): ServerConfig {
  const file = join(dataDir, 'config.json');
  let fromFile: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      fromFile = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
  }
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const parsed = serverConfigSchema.safeParse({ ...fromFile, ...defined });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration (${file} or flags): ${problems}`);
  }
  return parsed.data;
}

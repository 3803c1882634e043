import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock, type ManualClock } from '../../src/shared/clock.ts';
import { serverConfigSchema, type ServerConfig } from '../../src/main/config/server-config.ts';
import { startService, type RunningService } from '../../src/main/service.ts';
import { databasePath, secretKeyPath } from '../../src/main/store/data-dir.ts';
import { openDatabase } from '../../src/main/store/db.ts';
import { createStore, type Store } from '../../src/main/store/index.ts';
import { keyFileBox } from '../../src/main/auth/secret-box.ts';
import { clientSettingsSchema, type ClientSettings } from '../../src/shared/client-settings.ts';
import type { Engine } from '../../src/main/engines/engine.ts';
import type { Resolver } from '../../src/main/delivery/sender.ts';
import { signBody } from './sign.ts';

export const T0 = Date.UTC(2026, 10, 21, 9, 0, 0);

export interface PostOptions {
  client?: string;
  secret?: string;
  timestamp?: number;
  headers?: Record<string, string>;
}

export interface Res {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { code?: string; errors?: Array<{ path: string; message: string }> };
}

export interface Harness {
  url: string;
  base: string;
  dataDir: string;
  clock: ManualClock;
  /** A second connection, as the CLI would have: changes made here reach the server live. */
  admin: Store;
  service: RunningService;
  addClient(id: string, settings?: Partial<ClientSettings>, secret?: string): string;
  now(): number;
  post(info: Record<string, unknown>, options?: PostOptions): Promise<Res>;
  postRaw(body: string | Buffer, headers?: Record<string, string>): Promise<Res>;
  /**
   * Resolves once everything already set in motion has finished (RunningService.quiesce): every
   * write committed, no reply being made, no delivery attempt unrecorded, nothing due on the
   * clock. After it, "nothing happened" is a fact rather than the outcome of a short sleep.
   */
  quiesce(): Promise<void>;
  /** Stops the service, lets `downForMs` pass on the clock (an outage), and starts it again. */
  restart(downForMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  config?: Partial<ServerConfig>;
  /** Where the hand-moved clock starts; real time for tests that sign with `date +%s`. */
  clockStart?: number;
  engine?: Engine;
  dataDir?: string;
  resolve?: Resolver;
  random?: () => number;
  log?: (line: string) => void;
  /** The time source of the service's per-turn budget (see ServiceOptions.turnClock). */
  turnClock?: () => number;
  /** The console read thread's entry (ServiceOptions.readerEntry): a test's own, to hold a read. */
  readerEntry?: URL | string;
}

async function parse(r: Response): Promise<Res> {
  const text = await r.text();
  let body: Res['body'];
  try {
    body = JSON.parse(text) as Res['body'];
  } catch {
    body = { text } as Res['body'];
  }
  return { status: r.status, headers: r.headers, body };
}

/** The real service on 127.0.0.1:0 over a real SQLite file in a temp dir, with a hand-moved clock. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'switchboard-test-'));
  const clock = manualClock(options.clockStart ?? T0);
  const config = serverConfigSchema.parse({ port: 0, ...options.config });
  const start = (): Promise<RunningService> =>
    startService({ config, dataDir, clock, engine: options.engine, resolve: options.resolve, random: options.random ?? (() => 0.5), log: options.log ?? (() => {}), turnClock: options.turnClock, readerEntry: options.readerEntry });
  let service = await start();
  const admin = createStore(openDatabase(databasePath(dataDir)));
  const box = keyFileBox(secretKeyPath(dataDir));
  const secrets = new Map<string, string>();

  const h: Harness = {
    url: service.endpointUrl,
    base: service.endpointUrl.replace('/custom-im/chat-messages', ''),
    dataDir,
    clock,
    admin,
    service,
    addClient(id, settings = {}, secret = `secret-${id}-0123456789abcdefghijklmnopqrstuvwxyz`) {
      admin.clients.create(id, clientSettingsSchema.parse(settings), clock.now());
      admin.clients.addSecret(id, box.seal(secret), secret.slice(-4), clock.now());
      secrets.set(id, secret);
      return secret;
    },
    now: () => Math.floor(clock.now() / 1000),
    quiesce: () => h.service.quiesce(),
    async post(info, o = {}) {
      const client = o.client ?? 'acme';
      const secret = o.secret ?? secrets.get(client) ?? 'no-secret';
      const body = signBody(client, secret, info, o.timestamp ?? h.now());
      return parse(
        await fetch(h.url, { method: 'POST', headers: { 'content-type': 'application/json', ...o.headers }, body: JSON.stringify(body) }),
      );
    },
    async postRaw(body, headers = { 'content-type': 'application/json' }) {
      return parse(await fetch(h.url, { method: 'POST', headers, body }));
    },
    async restart(downForMs = 0) {
      await service.stop();
      clock.advance(downForMs);
      service = await start();
      h.service = service;
      h.url = service.endpointUrl;
      h.base = service.endpointUrl.replace('/custom-im/chat-messages', '');
    },
    async stop() {
      await service.stop();
      admin.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}

let counter = 0;
/** A unique msg_id per call, so tests never collide on idempotency keys by accident. */
export function mid(prefix = 'msg'): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

/** A customer's auto_dialog text message with a fresh msg_id, and whatever `extra` changes. */
export function customerMessage(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { event_type: 'auto_dialog', msg_id: mid(), from_user_id: 'cust-1', from_user_type: 2, content: 'hello', ...extra };
}

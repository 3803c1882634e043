import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { MAIN_V8_FLAGS } from '../../src/main/runtime-flags.ts';
import { keyFileBox } from '../../src/main/auth/secret-box.ts';
import { signBody } from './sign.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A `npm run serve -- --store postgres://…` node as a real child process. */
export interface PgNode {
  child: ChildProcess;
  endpoint: string;
  nodeId: string;
  /** The console URL the node printed (`console: …/#token=…`), printed before its store line. */
  console: string;
  stderr(): string;
  exit(): Promise<number | null>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | null>;
}

/** Starts a node on `storeUrl` (a data folder of its own for config.json; the key file every node shares); resolves once it printed its endpoint and store lines. */
export async function spawnPgNode(dataDir: string, storeUrl: string, keyFile: string, extra: string[] = []): Promise<PgNode> {
  const child = spawn(
    process.execPath,
    [...MAIN_V8_FLAGS, 'src/main/headless.ts', '--port', '0', '--console-port', '0', '--data-dir', dataDir, '--store', storeUrl, '--secret-key-file', keyFile, ...extra],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines = createInterface({ input: child.stdout! });
  let endpoint = '';
  let nodeId = '';
  let consoleUrl = '';
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.startsWith('endpoint: ')) endpoint = line.slice(10);
      if (line.startsWith('console: ')) consoleUrl = line.slice(9);
      const store = /^store: .* \(node (.+)\)$/.exec(line);
      if (store) nodeId = store[1]!;
      if (endpoint && nodeId) resolve();
    });
    void exited.then((code) => reject(new Error(`serve --store exited with ${code}: ${err}`)));
  });
  return {
    child,
    endpoint,
    nodeId,
    console: consoleUrl,
    stderr: () => err,
    exit: () => exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A database for an installation, as docs/operations.md says to create it (UTF-8 ctype, so trigrams keep Chinese); returns its URL. */
export async function createInstallationDatabase(serverUrl: string, name = 'switchboard'): Promise<string> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' LC_COLLATE 'C.UTF-8'`);
  } finally {
    await admin.end();
  }
  return serverUrl.replace(/\/postgres$/, `/${name}`);
}

/** Registers a client straight in the shared database, its secret sealed with the nodes' key file (what `store copy` or the CLI would have written). */
export async function addPgClient(storeUrl: string, keyFile: string, id: string, secret: string, settings: Record<string, unknown>): Promise<void> {
  const db = new pg.Client({ connectionString: storeUrl });
  await db.connect();
  try {
    await db.query('INSERT INTO clients (id, enabled, settings, created_at, updated_at) VALUES ($1, 1, $2, 1, 1)', [id, JSON.stringify(settings)]);
    await db.query('INSERT INTO client_secrets (client_id, sealed, hint, created_at) VALUES ($1, $2, $3, 1)', [id, keyFileBox(keyFile).seal(secret), secret.slice(-4)]);
  } finally {
    await db.end();
  }
}

/** POSTs a signed chat message to a node; returns the status, headers and parsed body. */
export async function post(endpoint: string, client: string, secret: string, info: Record<string, unknown>, body?: Record<string, unknown>): Promise<{ status: number; headers: Headers; json: Record<string, unknown>; sent: Record<string, unknown> }> {
  const sent = body ?? signBody(client, secret, info, Math.floor(Date.now() / 1000));
  const res = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown>, sent };
}

/** A node's console address and the token its printed `console:` URL carries in the fragment. */
export function nodeConsole(node: PgNode): { base: string; token: string } {
  const url = new URL(node.console);
  const token = new URLSearchParams(url.hash.slice(1)).get('token');
  if (!token) throw new Error(`no token in the console URL the node printed: ${node.console}`);
  return { base: url.origin, token };
}

/** An installation's database on `serverUrl`, the key file its nodes share, and a data folder per name under `dir` holding `config` as its config.json. */
export async function preparePgInstallation(serverUrl: string, dir: string, names: readonly string[], config: Record<string, unknown>): Promise<{ storeUrl: string; keyFile: string; dataDirs: string[] }> {
  const storeUrl = await createInstallationDatabase(serverUrl);
  const keyFile = join(dir, 'shared.key');
  keyFileBox(keyFile).seal('make the key file');
  const dataDirs = names.map((name) => {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(join(dir, name, 'config.json'), JSON.stringify(config));
    return join(dir, name);
  });
  return { storeUrl, keyFile, dataDirs };
}

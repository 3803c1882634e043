import { parseArgs } from 'node:util';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { constants, enableCompileCache } from 'node:module';
import type { AddressInfo } from 'node:net';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Node's compile cache, before any of the service's modules loads: the service runs from its
 * TypeScript sources, and without the cache every start strips the types of every module again,
 * once in this thread and once in each worker thread (writer, console reads, engine), each
 * loading the type stripper of its own. Measured on an empty data folder (bench/startup, a quiet
 * machine): spawn to /healthz 877 ms and 197 MB RSS without, 579 ms and 161 MB with a warm cache. The cache is
 * keyed by each file's contents and Node's version, so an edited source is compiled again; the
 * first start after a change fills it. Same folder as `npm run cli`. An operator's own
 * NODE_COMPILE_CACHE (or NODE_DISABLE_COMPILE_CACHE) wins: Node has then acted on it already.
 */
function enableCompileCacheForAllThreads(): void {
  if (process.env['NODE_COMPILE_CACHE'] !== undefined || process.env['NODE_DISABLE_COMPILE_CACHE'] !== undefined) return;
  const dir = join(ROOT, 'node_modules', '.cache', 'node-compile');
  const { status } = enableCompileCache(dir);
  const { ENABLED, ALREADY_ENABLED } = constants.compileCacheStatus;
  // Worker threads read the variable as they start (they do not share this thread's cache setting).
  if (status === ENABLED || status === ALREADY_ENABLED) process.env['NODE_COMPILE_CACHE'] = dir;
}
enableCompileCacheForAllThreads();

// Loaded after the compile cache is on (static imports would load before the line above runs).
const { defaultDataDir, loadServerConfig, ConfigError } = await import('./config/server-config.ts');
const { startService } = await import('./service.ts');
const { keyringBox, openKeyring } = await import('./auth/secret-box.ts');
const { keyFileModeWarning, resolveKeySource, SecretKeyError } = await import('./auth/sealing-key.ts');
const { startupKeyCheck, startupKeyCheckOf } = await import('./auth/startup-key-check.ts');
const { createConsoleServer } = await import('./console-api/console-server.ts');
const { consoleTokenAtStart } = await import('./console-api/console-token.ts');
const { parsePort, UsageError } = await import('./cli/args.ts');
const { planConsoleListener } = await import('./console-api/console-listener-plan.ts');
const { urlHost } = await import('./console-api/console-access.ts');
const { trustedProxiesOf } = await import('./console-api/client-address.ts');
const { storeOf, STORE_ENV } = await import('./config/store-choice.ts');

/** `npm run serve`: the message endpoint and the browser console, without Electron. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'console-port': { type: 'string' },
      'console-host': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'public-origin': { type: 'string' },
      'trusted-proxy': { type: 'string', multiple: true },
      'data-dir': { type: 'string' },
      'secret-key-file': { type: 'string' },
      store: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log('usage: npm run serve -- [--port 8787] [--host 127.0.0.1] [--console-port 8788] [--console-host 127.0.0.1] [--tls-cert FILE --tls-key FILE | --public-origin https://NAME [--trusted-proxy ADDR]...] [--data-dir DIR] [--secret-key-file FILE] [--store postgres://USER@HOST/DB]');
    return;
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const config = loadServerConfig(dataDir, {
    port: values.port === undefined ? undefined : parsePort(values.port, '--port'),
    host: values.host,
    consolePort: values['console-port'] === undefined ? undefined : parsePort(values['console-port'], '--console-port'),
    consoleHost: values['console-host'],
    // Paths on the command line are the shell's, from where serve was started; in config.json, from the data folder.
    tlsCert: values['tls-cert'] === undefined ? undefined : resolve(values['tls-cert']),
    tlsKey: values['tls-key'] === undefined ? undefined : resolve(values['tls-key']),
    publicOrigin: values['public-origin'],
    trustedProxies: values['trusted-proxy'],
  });
  const storeUrl = storeOf(values.store, process.env[STORE_ENV], () => config.store);
  // Refused here, before the service opens the database: a wrong flag costs nothing.
  const listener = planConsoleListener(config, dataDir);
  for (const warning of listener.warnings) console.error(warning);
  // The key every node sharing this database must have: read (and refused) before the database opens.
  const keySource = resolveKeySource({ flagFile: values['secret-key-file'], env: process.env, configFile: config.secretKeyFile, dataDir });
  const keyring = openKeyring(keySource);
  const keyWarning = keyFileModeWarning(keySource);
  if (keyWarning && !(keySource.kind === 'file' && keySource.createIfMissing)) console.error(keyWarning);
  console.error(`secret key: ${keyring.keys().current.id} (${keySource.label})`);
  if (storeUrl) return servePostgres(storeUrl, config, keyring, listener);
  // Known once the console listens (its port may be 0 in the config); sign-in links made before cannot happen.
  let consoleOrigin: string | null = null;
  const service = await startService({ config, dataDir, secretBox: keyringBox(keyring), consoleOrigin: () => consoleOrigin });
  const keyCheck = startupKeyCheck(service.store, keyring);
  for (const line of keyCheck.warnings) console.error(line);
  if (keyCheck.fatal) {
    await service.stop();
    throw new SecretKeyError(keyCheck.fatal);
  }
  const { token, replacedPlainToken } = consoleTokenAtStart(service.store.settings, keyring);
  if (replacedPlainToken) console.error('console: the token stored in plain text by an older version was replaced by a hashed one; old console URLs stop working, use the one printed below');
  const consoleServer = await listenConsole(config, listener, service.console);
  const consolePort = (consoleServer.address() as AddressInfo).port;
  // The origin agents open: the public origin, or the https:// name the certificate covers, or loopback.
  consoleOrigin = listener.originFor(consolePort);

  console.log(`endpoint: ${service.endpointUrl}`);
  printConsole(listener, consoleServer, token);
  console.log(`data: ${dataDir}`);

  stopOnSignals('finishing in-flight requests, then closing the database', () => {
    consoleServer.close();
    consoleServer.closeAllConnections();
    return service.stop();
  });
}

type ConsoleListener = ReturnType<typeof planConsoleListener>;
type ConsoleServer = ReturnType<typeof createConsoleServer>;

/** The browser console's listener, serving `parts` (either store's handlers and events). */
async function listenConsole(config: Awaited<ReturnType<typeof loadServerConfig>>, listener: ConsoleListener, parts: Pick<Parameters<typeof createConsoleServer>[0], 'accounts' | 'handlers' | 'events'>): Promise<ConsoleServer> {
  const consoleServer = createConsoleServer({
    rendererDir: join(ROOT, 'out', 'renderer'),
    ...parts,
    log: (line) => console.error(line),
    tls: listener.tls,
    access: listener.access,
    trustedProxies: trustedProxiesOf(config),
  });
  await new Promise<void>((done, reject) => {
    consoleServer.once('error', reject);
    consoleServer.listen(config.consolePort, listener.host, () => done());
  });
  return consoleServer;
}

/** The console's lines: where a proxy should send requests (behind one), and the URL with its token. */
function printConsole(listener: ConsoleListener, consoleServer: ConsoleServer, token: string): void {
  const address = consoleServer.address() as AddressInfo;
  // Behind a proxy the printed origin is the proxy's: say where the proxy should send requests.
  if (listener.access.publicOrigin !== null) console.log(`console listener: ${listener.tls ? 'https' : 'http'}://${urlHost(address.address)}:${address.port} (the proxy for ${listener.access.publicOrigin} forwards here)`);
  // The fragment is never sent to a server, so the token stays out of logs and Referer headers.
  console.log(`console: ${listener.originFor(address.port)}/#token=${token}`);
}

/** Longer than a stop's own waits (in-flight requests, a delivery's record, the 15 s query time-out). */
const STOP_DEADLINE_MS = 30_000;

/** On SIGTERM or SIGINT (once): says what it does, runs `finish`, exits 0, or 1 naming the failure or the deadline. */
function stopOnSignals(doing: string, finish: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: ${doing}`);
    // A store that stopped answering must not keep the process from ending: out after a while, saying so.
    setTimeout(() => {
      console.error(`shutdown did not finish within ${STOP_DEADLINE_MS / 1000} s; exiting`);
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    finish().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`shutdown failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** A node of a PostgreSQL installation (issue 30): the endpoint, auto replies and the outbox; any number of nodes on one database. */
async function servePostgres(storeUrl: string, config: Awaited<ReturnType<typeof loadServerConfig>>, keyring: ReturnType<typeof openKeyring>, listener: ConsoleListener): Promise<void> {
  const { startPgService } = await import('./pg-service.ts');
  const { redactedStoreUrl } = await import('./store/pg/pool.ts');
  let consoleOrigin: string | null = null;
  const node = await startPgService({ config, storeUrl, secretBox: keyringBox(keyring), consoleOrigin: () => consoleOrigin });
  const keyCheck = startupKeyCheckOf(node.sealedValues(), keyring);
  for (const line of keyCheck.warnings) console.error(line);
  if (keyCheck.fatal) {
    await node.stop();
    throw new SecretKeyError(keyCheck.fatal);
  }
  const { token } = await node.consoleTokenAtStart(keyring);
  const consoleServer = await listenConsole(config, listener, node.console);
  consoleOrigin = listener.originFor((consoleServer.address() as AddressInfo).port);
  console.log(`endpoint: ${node.endpointUrl}`);
  printConsole(listener, consoleServer, token);
  console.log(`store: ${redactedStoreUrl(storeUrl)} (node ${node.nodeId})`);
  stopOnSignals("finishing in-flight requests, releasing this node's leases", () => {
    consoleServer.close();
    consoleServer.closeAllConnections();
    return node.stop();
  });
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError || error instanceof SecretKeyError || ['EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES'].includes((error as NodeJS.ErrnoException).code ?? '') || error instanceof TypeError) {
    console.error(`switchboard: ${(error as Error).message}`);
  } else {
    console.error(`switchboard: failed to start: ${(error as Error).stack ?? String(error)}`);
  }
  process.exit(1);
});

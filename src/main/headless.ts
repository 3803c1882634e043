import { parseArgs } from 'node:util';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { defaultDataDir, loadServerConfig, ConfigError } from './config/server-config.ts';
import { startService } from './service.ts';
import { secretKeyPath } from './store/data-dir.ts';
import { createConsoleServer } from './console-api/console-server.ts';
import { consoleTokenAtStart, createTokenCheck } from './console-api/console-token.ts';
import { parsePort, UsageError } from './cli/args.ts';

/** `npm run serve`: the message endpoint and the browser console, without Electron. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'console-port': { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log('usage: npm run serve -- [--port 8787] [--host 127.0.0.1] [--console-port 8788] [--data-dir DIR]');
    return;
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  const config = loadServerConfig(dataDir, {
    port: values.port === undefined ? undefined : parsePort(values.port, '--port'),
    host: values.host,
    consolePort: values['console-port'] === undefined ? undefined : parsePort(values['console-port'], '--console-port'),
  });
  const service = await startService({ config, dataDir });
  const { token, replacedPlainToken } = consoleTokenAtStart(service.store.settings, secretKeyPath(dataDir));
  if (replacedPlainToken) console.error('console: the token stored in plain text by an older version was replaced by a hashed one; old console URLs stop working, use the one printed below');
  const rendererDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'out', 'renderer');
  const consoleServer = createConsoleServer({
    rendererDir,
    verifyToken: createTokenCheck(service.store.settings),
    handlers: service.console.handlers,
    events: service.console.events,
    log: (line) => console.error(line),
  });
  await new Promise<void>((resolve, reject) => {
    consoleServer.once('error', reject);
    consoleServer.listen(config.consolePort, '127.0.0.1', () => resolve());
  });
  const consoleAddress = consoleServer.address() as AddressInfo;

  console.log(`endpoint: ${service.endpointUrl}`);
  // The fragment is never sent to a server, so the token stays out of logs and Referer headers.
  console.log(`console: http://127.0.0.1:${consoleAddress.port}/#token=${token}`);
  console.log(`data: ${dataDir}`);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: finishing in-flight requests, then closing the database`);
    consoleServer.close();
    consoleServer.closeAllConnections();
    service.stop().then(
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

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError || (error as NodeJS.ErrnoException).code === 'EADDRINUSE' || error instanceof TypeError) {
    console.error(`switchboard: ${(error as Error).message}`);
  } else {
    console.error(`switchboard: failed to start: ${(error as Error).stack ?? String(error)}`);
  }
  process.exit(1);
});

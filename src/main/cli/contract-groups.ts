import type { Keyring } from '../auth/secret-box.ts';
import { loadServerConfig } from '../config/server-config.ts';
import { planConsoleListener } from '../console-api/console-listener-plan.ts';
import { consoleOriginOf } from '../accounts/console-origin.ts';
import type { StoreTarget } from './store-target.ts';

/** The groups written once against the store contract: the same code on SQLite (sqliteTarget) and PostgreSQL (pgStore). */
export const CONTRACT_GROUPS: readonly string[] = ['agents', 'deliveries', 'secrets', 'console'];

export interface CommandOutcome {
  out: string;
  status: number;
}

export interface GroupContext {
  dataDir: string;
  keys: () => Keyring;
  now: number;
  args: string[];
  flags: Record<string, unknown>;
}

/**
 * Where sign-in links point: the console `serve` prints with this data folder's config (its public
 * origin, the https:// name its certificate covers, or its console port on 127.0.0.1); unknown
 * when the port is 0 (any free port). A certificate the CLI cannot read falls back to the plain rule.
 */
function configuredConsoleOrigin(dataDir: string): string | null {
  let config: ReturnType<typeof loadServerConfig>;
  try {
    config = loadServerConfig(dataDir);
  } catch {
    return null;
  }
  if (config.consolePort === 0 || config.publicOrigin) return consoleOriginOf(config);
  try {
    return planConsoleListener(config, dataDir).originFor(config.consolePort);
  } catch {
    return consoleOriginOf(config);
  }
}

/** For the hint only: serve may be started with another --console-port. */
function configuredConsolePort(dataDir: string): number | null {
  try {
    return loadServerConfig(dataDir).consolePort || null;
  } catch {
    return null;
  }
}

/** One of CONTRACT_GROUPS on `target`; each module is loaded by the group that runs. */
export async function contractGroupCommand(group: string, target: StoreTarget, ctx: GroupContext): Promise<CommandOutcome> {
  const { args, flags, now } = ctx;
  if (group === 'agents') {
    const { agentsCommand } = await import('./agents-commands.ts');
    return { out: await agentsCommand(target, now, args, flags as import('./agents-commands.ts').AgentFlags, configuredConsoleOrigin(ctx.dataDir)), status: 0 };
  }
  if (group === 'deliveries') {
    const { deliveriesCommand } = await import('./deliveries-commands.ts');
    return { out: await deliveriesCommand(target.store, now, args, flags as { state?: string; limit?: string }), status: 0 };
  }
  if (group === 'secrets') {
    const { secretsCommand } = await import('./secrets-commands.ts');
    return secretsCommand(target, ctx.keys, args, flags as { 'new-key-file'?: string });
  }
  if (group === 'console') {
    const { consoleCommand } = await import('./console-commands.ts');
    return { out: await consoleCommand(target.store, ctx.keys(), configuredConsolePort(ctx.dataDir), args), status: 0 };
  }
  throw new Error(`"${group}" is not written against the store contract`);
}

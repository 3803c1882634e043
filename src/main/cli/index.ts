import { parseArgs } from 'node:util';
import { defaultDataDir, loadServerConfig } from '../config/server-config.ts';
import { openDatabase } from '../store/db.ts';
import { createStore, type Store } from '../store/index.ts';
import { sqliteClientStore } from '../store/contract.ts';
import { keyringBox, openKeyring, type Keyring, type SecretBox } from '../auth/secret-box.ts';
import { KEY_ENV, KEY_FILE_ENV, keyFileModeWarning, resolveKeySource, SecretKeyError } from '../auth/sealing-key.ts';
import { databasePath } from '../store/data-dir.ts';
import { clientsCommand } from './clients-commands.ts';
import { secretFrom } from './secret-input.ts';
import { processCliIo, type CliIo } from './cli-io.ts';
import { ImportError } from './kb-import.ts';
import { kbCommand, sqliteKbCliStore } from './kb-commands.ts';
import { flagError, UsageError } from './args.ts';
import { SETTING_FLAGS } from './settings-flags.ts';
import { backupCommand } from './backup-command.ts';
import { EVAL_USAGE, STORE_USAGE } from './command-usage.ts';
import { systemClock } from '../../shared/clock.ts';
import { thresholdSource } from '../engines/kb-threshold.ts';
import { StoreChoiceError } from '../config/store-choice.ts';
import { ON_POSTGRES, postgresCommand } from './postgres-commands.ts';
import { newKeyCommand, SECRETS_USAGE } from './secrets-commands.ts';
import { AGENTS_USAGE } from './agents-commands.ts';
import { cliStoreUrl, refuseOnPostgres, sqliteTarget } from './store-target.ts';
import { CONTRACT_GROUPS, contractGroupCommand } from './contract-groups.ts';

const USAGE = `usage: npm run cli -- <command> [--data-dir DIR] [--secret-key-file FILE] [--store postgres://USER@HOST/DB]
  (--store, SWITCHBOARD_STORE or config.json store: clients, kb, engines, agents, deliveries and secrets work on that PostgreSQL database;
   backup (use pg_dump), console and eval refuse it)
  clients add ID [--secret-env NAME | --secret-stdin | --secret S] [SETTINGS]
  clients set ID SETTINGS
  clients show ID | clients list
  clients rotate ID [--retire-previous] [--secret-env NAME | --secret-stdin | --secret S]
       (a secret you choose, at least 32 characters; without one Switchboard makes one. --secret shows in ps: prefer the other two)
  clients disable ID | clients enable ID
    SETTINGS: ${Object.entries(SETTING_FLAGS).map(([f, s]) => `--${f} (${s.expects})`).join('\n              ')}
  engines add NAME --model M [--base-url URL] [--api-key-env VAR | --api-key-stdin] [--system-prompt S]
                   [--temperature T] [--max-tokens N] [--timeout-ms N] [--context-tokens N] [--grounding N]
                   [--retries N] [--handoff-marker TEXT]   (again with the same NAME: changes those settings)
                   [--embedding-model M]   (match the knowledge base by meaning too, same URL and key; "" turns it off)
                   [--answer-from llm|kb]  (kb: answer with the best entry verbatim, no chat model; needs --embedding-model)
  engines list | engines test NAME [--question Q] | engines remove NAME
  deliveries list [--state pending|sent|dead|cancelled] [--limit N]
  deliveries show ID
  deliveries retry ID     (a dead delivery, with a fresh retry schedule)
  kb add --question Q --answer A
  kb import FILE          (JSON array of {question, answer, phrasings?}, or CSV with header question,answer[,phrasings])
  kb list
  console rotate-token    (a new console token; the old one stops working)
${SECRETS_USAGE}
  backup FILE             (a consistent copy of the database, also while serve runs; never overwrites)
${STORE_USAGE}
${AGENTS_USAGE}
${EVAL_USAGE}
integrator tools (no data folder needed; "npm run cli -- send --help" and "receive --help" say more):
  send --client ID --secret S [--endpoint URL] --event EVENT_TYPE
       [--from USER] [--from-type 1..4] [--to USER] [--group ID] [--at USER,...]
       [--nickname NAME] [--to-nickname NAME] [--group-name NAME]
       [--content TEXT] [--msg-id ID] [--send-url URL] [--file MESSAGE_INFO.json] [--timestamp SECONDS] [--dry-run] [--wait SECONDS]
       (signs one message, sends it, prints the response; --secret-env NAME or --secret-stdin keep the secret out of ps)
  receive [--port 9000] [--host 127.0.0.1] [--client ID --secret S] [--status 200]
       (a send_url receiver: prints each delivery, checks its signature and timestamp, answers --status)`;


/**
 * What a replay needs besides the store: serve's settings (the built-in engine's threshold, the
 * engine time-out, the fallback text) and the key that opens engines' API keys; the caller adds
 * the pending proposals.
 */
function evalDeps(dataDir: string, ring: Keyring) {
  const config = loadServerConfig(dataDir);
  const box = keyringBox(ring);
  return {
    openKey: (sealed: string) => box.open(sealed),
    kbThreshold: config.kbThreshold,
    engineTimeoutMs: config.engineTimeoutMs,
    fallbackText: config.fallbackText,
    // As serve gives its engines.
    contextLines: 50,
    clock: systemClock,
  };
}

/** Loaded by the command that runs (as eval and the integrator tools): a CLI start pays for its own. */
async function enginesOnSqlite(store: Store, box: SecretBox, now: number, args: string[], flags: import('./engines-commands.ts').EngineFlags, io: CliIo): Promise<string> {
  const { enginesCommand, sqliteEnginesCliStore } = await import('./engines-commands.ts');
  return enginesCommand(sqliteEnginesCliStore(store), box, now, args, flags, io.engines);
}

/** send and receive: integrator tools with their own flags, and no data folder or database. */
async function integratorTool(command: 'send' | 'receive', argv: string[], io: CliIo): Promise<number> {
  try {
    // Loaded by the command that runs (as store, engines and eval below): a CLI start pays for its own.
    if (command === 'send') {
      const { sendCommand } = await import('./send-command.ts');
      return await sendCommand(argv, io);
    }
    const { receiveCommand } = await import('./receive-command.ts');
    return await receiveCommand(argv, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`error: ${error.message}`);
    return 2;
  }
}

const COMMANDS = ['agents', 'backup', 'clients', 'console', 'deliveries', 'engines', 'eval', 'kb', 'secrets', 'store'];

/**
 * The sealing key, as serve takes it (sealing-key.ts has the precedence). config.json is read only
 * when neither the flag nor the environment names the key.
 */
function keyringFor(flagFile: string | undefined, dataDir: string, io: CliIo): Keyring {
  const named = flagFile !== undefined || !!io.env[KEY_FILE_ENV] || !!io.env[KEY_ENV];
  const source = resolveKeySource({ flagFile, env: io.env, configFile: named ? undefined : loadServerConfig(dataDir).secretKeyFile, dataDir });
  const ring = openKeyring(source);
  const warning = keyFileModeWarning(source);
  if (warning && source.kind === 'file' && !source.createIfMissing) io.err(warning);
  return ring;
}

const AGENT_FLAGS = ['name', 'role', 'capacity', 'origin'];

const OPTIONS = {
  'data-dir': { type: 'string' },
  'secret-key-file': { type: 'string' },
  store: { type: 'string' },
  'new-key-file': { type: 'string' },
  secret: { type: 'string' },
  'secret-env': { type: 'string' },
  'secret-stdin': { type: 'boolean' },
  ...Object.fromEntries(Object.keys(SETTING_FLAGS).map((f) => [f, { type: 'string' as const }])),
  'retire-previous': { type: 'boolean' },
  state: { type: 'string' },
  limit: { type: 'string' },
  'base-url': { type: 'string' },
  model: { type: 'string' },
  'embedding-model': { type: 'string' },
  'answer-from': { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-env': { type: 'string' },
  'api-key-stdin': { type: 'boolean' },
  'system-prompt': { type: 'string' },
  temperature: { type: 'string' },
  'max-tokens': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'context-tokens': { type: 'string' },
  'handoff-marker': { type: 'string' },
  grounding: { type: 'string' },
  retries: { type: 'string' },
  question: { type: 'string' },
  answer: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string' },
  capacity: { type: 'string' },
  origin: { type: 'string' },
  since: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  client: { type: 'string' },
  threshold: { type: 'string' },
  concurrency: { type: 'string' },
  'with-proposals': { type: 'boolean' },
  batch: { type: 'string' },
  yes: { type: 'boolean' },
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The whole CLI: argv without node and the script; returns the exit status. */
export async function runCli(argv: string[], io: CliIo = processCliIo): Promise<number> {
  const command = argv[0];
  if (command === 'send' || command === 'receive') return integratorTool(command, argv.slice(1), io);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // One option set serves every command: the suggestion comes from all of it.
    const group = argv.find((a) => COMMANDS.includes(a)) ?? 'npm run cli';
    // The agents' flags are suggested for agents only: "clients add --nope" does not mean --name.
    const known = Object.keys(OPTIONS).filter((f) => group === 'agents' || !AGENT_FLAGS.includes(f));
    io.err(`error: ${flagError(error, group, known, 'npm run cli -- --help (it lists every command and setting)').message}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [group, ...rest] = positionals;
  if (values.help || !group) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
  const dataDir = values['data-dir'] ?? defaultDataDir();
  let store: Store | undefined;
  try {
    if (group === 'send' || group === 'receive') throw new UsageError(`${group} comes first: npm run cli -- ${group} --help`);
    if (!COMMANDS.includes(group)) throw new UsageError(`unknown command "${group}"; use agents, backup, clients, console, deliveries, engines, eval, kb, secrets, store, send or receive`);
    if (group === 'store') {
      const { storeCommand } = await import('./store-commands.ts');
      io.out(await storeCommand(dataDir, rest, values));
      return 0;
    }
    if (group === 'secrets' && rest[0] === 'new-key') {
      io.out(newKeyCommand(rest.slice(1)));
      return 0;
    }
    // store copy (above) has its own --to, and a new key file touches no store: every other group follows the store setting.
    const storeUrl = cliStoreUrl(values.store, io.env, dataDir);
    if (storeUrl !== null && !ON_POSTGRES.includes(group)) throw refuseOnPostgres(group, ON_POSTGRES);
    if (group === 'backup') {
      io.out(await backupCommand(databasePath(dataDir), rest));
      return 0;
    }
    // Read when first needed: "clients list" runs without the key, "clients add" needs it.
    let ring: Keyring | undefined;
    const keys = (): Keyring => (ring ??= keyringFor(values['secret-key-file'], dataDir, io));
    const box: SecretBox = { scheme: 'keyfile', seal: (secret) => keyringBox(keys()).seal(secret), open: (sealed) => keyringBox(keys()).open(sealed) };
    const now = io.nowMs();
    const context = { dataDir, keys, now, args: rest, flags: values };
    if (storeUrl !== null || CONTRACT_GROUPS.includes(group)) {
      const outcome = storeUrl !== null ? await postgresCommand(group, storeUrl, io, box, context) : await contractGroupCommand(group, sqliteTarget((store = createStore(openDatabase(databasePath(dataDir))))), context);
      io.out(outcome.out);
      return outcome.status;
    }
    const opened = createStore(openDatabase(databasePath(dataDir)));
    store = opened;
    const out =
      group === 'clients'
        ? await clientsCommand(sqliteClientStore(store), box, now, rest, { ...values, secret: await secretFrom(values, io) })
        : group === 'engines'
          ? await enginesOnSqlite(store, box, now, rest, values, io)
          : group === 'eval'
            ? await (await import('./eval-commands.ts')).evalCommand(store, { ...evalDeps(dataDir, keys()), kbThreshold: thresholdSource(opened.settings, loadServerConfig(dataDir).kbThreshold), pendingChanges: () => opened.proposals.pendingChanges() }, rest, values)
            : await kbCommand(sqliteKbCliStore(store), now, rest, values);
    io.out(out);
    return 0;
  } catch (error) {
    if (error instanceof StoreChoiceError) {
      io.err(`error: ${error.message}`);
      return 2;
    }
    if (error instanceof UsageError) {
      io.err(`error: ${error.message}\n(npm run cli -- --help lists every command and setting)`);
      return 2;
    }
    if (error instanceof SecretKeyError) {
      io.err(`error: ${error.message}`);
      return 1;
    }
    if (error instanceof ImportError) {
      io.err(`error: import refused, nothing was imported: ${error.message}`);
      return 1;
    }
    io.err(`error: ${(error as Error).message}`);
    return 1;
  } finally {
    store?.close();
  }
}

// Run as a program (npm run cli); a test imports runCli instead.
if (import.meta.main) process.exitCode = await runCli(process.argv.slice(2));

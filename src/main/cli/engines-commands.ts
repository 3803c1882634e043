import type { Store } from '../store/index.ts';
import type { EnginesCliStore } from '../store/contract.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { engineConfigSchema, BUILTIN_ENGINE, type EngineConfig } from '../../shared/engine-config.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT } from '../engines/openai-engine.ts';
import { buildKbIndex } from '../engines/kb-index.ts';
import { createEmbeddingsClient, DEFAULT_EMBEDDINGS } from '../engines/embeddings/embeddings-client.ts';
import { UsageError } from './args.ts';
import { flagIssues } from './flag-errors.ts';

export interface EngineFlags {
  'base-url'?: string;
  model?: string;
  'embedding-model'?: string;
  'answer-from'?: string;
  'api-key'?: string;
  'api-key-env'?: string;
  'api-key-stdin'?: boolean;
  'system-prompt'?: string;
  temperature?: string;
  'max-tokens'?: string;
  'timeout-ms'?: string;
  'context-tokens'?: string;
  'handoff-marker'?: string;
  grounding?: string;
  retries?: string;
  question?: string;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Where the CLI reads a key from and says warnings; tests pass their own. */
export interface EnginesIo {
  env: Record<string, string | undefined>;
  readStdin: () => Promise<string>;
  warn: (line: string) => void;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
  return text;
}

const defaultIo: EnginesIo = {
  env: process.env,
  readStdin: () => {
    if (process.stdin.isTTY) console.error('reading the API key from standard input: paste it, then Enter and Ctrl-D');
    return readAll(process.stdin);
  },
  warn: (line) => console.error(line),
};

/**
 * The API key from exactly one of --api-key, --api-key-env NAME, --api-key-stdin; undefined when
 * none is given (an update keeps the stored key). Errors name the flag and never echo a key.
 */
async function apiKeyFrom(flags: EngineFlags, io: EnginesIo): Promise<string | undefined> {
  const given = (['api-key', 'api-key-env', 'api-key-stdin'] as const).filter((f) => flags[f] !== undefined && flags[f] !== false);
  if (given.length > 1) throw new UsageError(`give the API key one way only, not ${given.map((f) => `--${f}`).join(' and ')}`);
  let key: string | undefined;
  let flag: string;
  if (flags['api-key-env'] !== undefined) {
    const name = flags['api-key-env'];
    flag = `--api-key-env ${name}`;
    // Never echo the value: someone may have passed the key itself here.
    if (!ENV_NAME.test(name)) throw new UsageError('--api-key-env takes the NAME of an environment variable (letters, digits, _), not the key itself');
    key = io.env[name];
    if (key === undefined || key.trim() === '') throw new UsageError(`--api-key-env ${name}: that environment variable is unset or empty`);
  } else if (flags['api-key-stdin']) {
    flag = '--api-key-stdin';
    key = await io.readStdin();
    if (key.trim() === '') throw new UsageError('--api-key-stdin: standard input was empty; pipe the key in, e.g. from a password manager');
  } else if (flags['api-key'] !== undefined) {
    flag = '--api-key';
    key = flags['api-key'];
    if (key.trim() === '') throw new UsageError('--api-key is empty');
    io.warn('warning: --api-key puts the key on the command line, visible to other local users (ps, shell history); prefer --api-key-env NAME or --api-key-stdin');
  } else {
    return undefined;
  }
  key = key.trim();
  if (/[\s\x00-\x1f\x7f]/.test(key)) throw new UsageError(`${flag}: the key has spaces, line breaks or control characters inside; give the key alone`);
  return key;
}

/** Each engine setting's flag: errors name the flag, never the schema key. */
const FLAG_OF: Record<keyof EngineConfig, string> = {
  baseUrl: 'base-url',
  model: 'model',
  embeddingModel: 'embedding-model',
  answerFrom: 'answer-from',
  systemPrompt: 'system-prompt',
  temperature: 'temperature',
  maxTokens: 'max-tokens',
  timeoutMs: 'timeout-ms',
  contextTokens: 'context-tokens',
  handoffMarker: 'handoff-marker',
  groundingEntries: 'grounding',
  retries: 'retries',
};
const NUMERIC = new Set<string>(['temperature', 'maxTokens', 'timeoutMs', 'contextTokens', 'groundingEntries', 'retries']);

function num(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got "${value}"`);
  return n;
}

/** The models of an engine, as `add` and `list` print them. */
function describe(config: EngineConfig): string {
  const embedding = config.embeddingModel ? `embeddings ${config.embeddingModel}` : '';
  if (config.answerFrom === 'kb') return `answers from the knowledge base, ${embedding}`;
  return embedding ? `${config.model ?? ''}, ${embedding}` : (config.model ?? '');
}

/** One embeddings request for the probe: its dimensions and time, or an error saying why not. */
async function probeEmbeddings(name: string, baseUrl: string, model: string, apiKey: string | null, text: string): Promise<string> {
  const client = createEmbeddingsClient({ baseUrl, model, apiKey, timeoutMs: DEFAULT_EMBEDDINGS.timeoutMs, retries: 0, batchSize: 1 });
  const started = performance.now();
  try {
    const [v] = await client.embed([text], new AbortController().signal);
    return `engine ${name}: embedding model ${model} answered in ${Math.round(performance.now() - started)} ms (${v!.length} dimensions)`;
  } catch (error) {
    throw new Error(`engine ${name} failed the embeddings probe: ${(error as Error).message}`);
  }
}

/** The data folder's SQLite file as the engines commands see a store. */
export function sqliteEnginesCliStore(store: Store): EnginesCliStore {
  return { engines: store.engines, kbEntries: () => store.kb.all() };
}

/** `engines add|list|test|remove`: OpenAI-compatible engines; keys are sealed and never printed. */
export async function enginesCommand(store: EnginesCliStore, box: SecretBox, now: number, args: string[], flags: EngineFlags, io: EnginesIo = defaultIo): Promise<string> {
  const [action, name] = args;
  switch (action) {
    case 'add': {
      if (!name || !NAME.test(name) || name === BUILTIN_ENGINE) throw new UsageError(`engine NAME must be lower-case letters, digits, . _ - (and not "${BUILTIN_ENGINE}", the built-in engine)`);
      const existing = await store.engines.get(name);
      const input: Record<string, unknown> = { ...existing?.config };
      for (const [key, flag] of Object.entries(FLAG_OF)) {
        const raw = flags[flag as keyof EngineFlags];
        if (typeof raw === 'string') input[key] = NUMERIC.has(key) ? num(flag, raw) : raw;
      }
      // An empty --embedding-model turns matching by meaning off again.
      if (flags['embedding-model'] === '') delete input['embeddingModel'];
      const parsed = engineConfigSchema.safeParse(input);
      if (!parsed.success) throw new UsageError(flagIssues(parsed.error.issues, FLAG_OF, flags as Record<string, unknown>, input));
      const apiKey = await apiKeyFrom(flags, io);
      await store.engines.save(name, parsed.data, apiKey ? box.seal(apiKey) : null, now);
      return `engine ${name} ${existing ? 'updated' : 'added'}: ${describe(parsed.data)} at ${parsed.data.baseUrl}${apiKey ? ' (API key stored encrypted)' : ''}\nUse it with: npm run cli -- clients set CLIENT --engine ${name}`;
    }
    case 'list': {
      const rows = await store.engines.list();
      const lines = [`${BUILTIN_ENGINE}\tbuilt-in knowledge base`];
      for (const e of rows) lines.push(`${e.name}\t${describe(e.config)}\t${e.config.baseUrl}\tkey: ${e.apiKeySealed ? 'set' : 'none'}`);
      return lines.join('\n');
    }
    case 'remove': {
      if (!name || !(await store.engines.remove(name))) throw new UsageError(`no engine "${name ?? ''}"`);
      return `engine ${name} removed; clients still set to it hand every question to a human until they choose another`;
    }
    case 'test': {
      const row = name ? await store.engines.get(name) : undefined;
      if (!row) throw new UsageError(`no engine "${name ?? ''}"; see "engines list"`);
      const apiKey = row.apiKeySealed ? box.open(row.apiKeySealed) : null;
      const question = flags.question ?? 'Hello! In one short sentence: what can you help me with?';
      const probed = row.config.embeddingModel ? await probeEmbeddings(row.name, row.config.baseUrl, row.config.embeddingModel, apiKey, question) : '';
      const model = row.config.model;
      if (row.config.answerFrom === 'kb' || model === undefined) return `${probed}\nengine ${row.name} answers from the knowledge base (no chat model to test)`;
      const engine = createOpenAiEngine({ name: row.name, ...row.config, model, apiKey, systemPrompt: row.config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, retries: 0 }, { knowledge: buildKbIndex(await store.kbEntries()) });
      const started = performance.now();
      const answer = await engine.answer(
        { purpose: 'suggestion', channel: 'web', isGroup: false, context: [{ role: 'customer', speaker: null, content: question, at: now }], fallbackText: '' },
        new AbortController().signal,
      );
      const ms = Math.round(performance.now() - started);
      if (answer.handoff) {
        // A failed probe is a failure for scripts too: exit 1, one line saying why.
        const cause = (answer.cause ?? 'no answer').replace(`engine ${row.name}: `, '').replace(/\s+/g, ' ');
        throw new Error(`engine ${row.name} failed the probe after ${ms} ms: ${cause}`);
      }
      return `${probed ? `${probed}\n` : ''}engine ${row.name} answered in ${ms} ms:\n${answer.content}`;
    }
    default:
      throw new UsageError(`unknown engines command "${action ?? ''}"; use add, list, test or remove`);
  }
}

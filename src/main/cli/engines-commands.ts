import type { Store } from '../store/index.ts';
import type { SecretBox } from '../auth/secret-box.ts';
import { engineConfigSchema, BUILTIN_ENGINE } from '../../shared/engine-config.ts';
import { createOpenAiEngine, DEFAULT_SYSTEM_PROMPT } from '../engines/openai-engine.ts';
import { UsageError } from './args.ts';

export interface EngineFlags {
  'base-url'?: string;
  model?: string;
  'api-key'?: string;
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

function num(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got "${value}"`);
  return n;
}

/** `engines add|list|test|remove`: OpenAI-compatible engines; keys are sealed and never printed. */
export async function enginesCommand(store: Store, box: SecretBox, now: number, args: string[], flags: EngineFlags): Promise<string> {
  const [action, name] = args;
  switch (action) {
    case 'add': {
      if (!name || !NAME.test(name) || name === BUILTIN_ENGINE) throw new UsageError(`engine NAME must be lower-case letters, digits, . _ - (and not "${BUILTIN_ENGINE}", the built-in engine)`);
      const existing = store.engines.get(name);
      const parsed = engineConfigSchema.safeParse({
        ...existing?.config,
        ...Object.fromEntries(
          Object.entries({
            baseUrl: flags['base-url'],
            model: flags.model,
            systemPrompt: flags['system-prompt'],
            temperature: num('temperature', flags.temperature),
            maxTokens: num('max-tokens', flags['max-tokens']),
            timeoutMs: num('timeout-ms', flags['timeout-ms']),
            contextTokens: num('context-tokens', flags['context-tokens']),
            handoffMarker: flags['handoff-marker'],
            groundingEntries: num('grounding', flags.grounding),
            retries: num('retries', flags.retries),
          }).filter(([, v]) => v !== undefined),
        ),
      });
      if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.') === 'model' ? '--model' : i.path.join('.')}: ${i.message}`).join('; '));
      store.engines.save(name, parsed.data, flags['api-key'] ? box.seal(flags['api-key']) : null, now);
      return `engine ${name} ${existing ? 'updated' : 'added'}: ${parsed.data.model} at ${parsed.data.baseUrl}${flags['api-key'] ? ' (API key stored encrypted)' : ''}\nUse it with: npm run cli -- clients set CLIENT --engine ${name}`;
    }
    case 'list': {
      const rows = store.engines.list();
      const lines = [`${BUILTIN_ENGINE}\tbuilt-in knowledge base`];
      for (const e of rows) lines.push(`${e.name}\t${e.config.model}\t${e.config.baseUrl}\tkey: ${e.apiKeySealed ? 'set' : 'none'}`);
      return lines.join('\n');
    }
    case 'remove': {
      if (!name || !store.engines.remove(name)) throw new UsageError(`no engine "${name ?? ''}"`);
      return `engine ${name} removed; clients still set to it hand every question to a human until they choose another`;
    }
    case 'test': {
      const row = name ? store.engines.get(name) : undefined;
      if (!row) throw new UsageError(`no engine "${name ?? ''}"; see "engines list"`);
      const engine = createOpenAiEngine(
        { name: row.name, ...row.config, apiKey: row.apiKeySealed ? box.open(row.apiKeySealed) : null, systemPrompt: row.config.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, retries: 0 },
        { knowledge: store.kb },
      );
      const question = flags.question ?? 'Hello! In one short sentence: what can you help me with?';
      const started = performance.now();
      const answer = await engine.answer(
        { purpose: 'suggestion', channel: 'web', isGroup: false, context: [{ role: 'customer', speaker: null, content: question, at: now }], fallbackText: '' },
        new AbortController().signal,
      );
      const ms = Math.round(performance.now() - started);
      if (answer.handoff) return `engine ${row.name}: no answer after ${ms} ms: ${answer.cause ?? 'handoff'}`;
      return `engine ${row.name} answered in ${ms} ms:\n${answer.content}`;
    }
    default:
      throw new UsageError(`unknown engines command "${action ?? ''}"; use add, list, test or remove`);
  }
}

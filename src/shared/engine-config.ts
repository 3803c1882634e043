import { z } from 'zod';

/** The settings of an OpenAI-compatible engine (everything but its key). */
export const engineConfigSchema = z.object({
  baseUrl: z.string().url().default('http://127.0.0.1:11434/v1'),
  model: z.string().min(1).max(200),
  systemPrompt: z.string().max(20_000).optional(),
  temperature: z.number().min(0).max(2).default(0.3),
  maxTokens: z.number().int().min(1).max(32_000).default(400),
  timeoutMs: z.number().int().min(100).max(120_000).default(20_000),
  contextTokens: z.number().int().min(100).max(200_000).default(3000),
  handoffMarker: z.string().min(3).max(64).default('[[HANDOFF]]'),
  groundingEntries: z.number().int().min(0).max(20).default(3),
  retries: z.number().int().min(0).max(5).default(2),
});

export type EngineConfig = z.infer<typeof engineConfigSchema>;

/** The built-in knowledge-base engine's name; every other name is a configured engine. */
export const BUILTIN_ENGINE = 'kb';

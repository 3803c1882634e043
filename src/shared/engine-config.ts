import { z } from 'zod';

/** Where a configured engine's answers come from: a chat model writes them, or the best knowledge-base entry is said verbatim. */
export const ANSWER_FROM = ['llm', 'kb'] as const;
export type AnswerFrom = (typeof ANSWER_FROM)[number];

/** The settings of an OpenAI-compatible engine (everything but its key). */
export const engineConfigSchema = z
  .object({
    baseUrl: z.string().url().default('http://127.0.0.1:11434/v1'),
    /** The chat model; absent only when answers come from the knowledge base. */
    model: z.string().min(1).max(200).optional(),
    /**
     * An embedding model at the same base URL and key (POST /embeddings): set, the knowledge base
     * is matched by meaning as well as by words, for grounding and for answers from the knowledge base.
     */
    embeddingModel: z.string().min(1).max(200).optional(),
    answerFrom: z.enum(ANSWER_FROM).default('llm'),
    systemPrompt: z.string().max(20_000).optional(),
    temperature: z.number().min(0).max(2).default(0.3),
    maxTokens: z.number().int().min(1).max(32_000).default(400),
    timeoutMs: z.number().int().min(100).max(120_000).default(20_000),
    contextTokens: z.number().int().min(100).max(200_000).default(3000),
    handoffMarker: z.string().min(3).max(64).default('[[HANDOFF]]'),
    groundingEntries: z.number().int().min(0).max(20).default(3),
    retries: z.number().int().min(0).max(5).default(2),
  })
  .superRefine((c, ctx) => {
    // The messages follow the setting's name (the CLI puts its flag in front of them).
    if (c.answerFrom === 'llm' && c.model === undefined) {
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'is required: the chat model that writes the answers (unless answers come from the knowledge base, "kb")' });
    }
    if (c.answerFrom === 'kb' && c.embeddingModel === undefined) {
      // Without one it would be the built-in engine under another name: lexical and offline.
      ctx.addIssue({ code: 'custom', path: ['embeddingModel'], message: 'is required when answers come from the knowledge base ("kb"): that engine matches by meaning; the built-in "kb" engine is the one without a model' });
    }
  });

export type EngineConfig = z.infer<typeof engineConfigSchema>;

/** The built-in knowledge-base engine's name; every other name is a configured engine. */
export const BUILTIN_ENGINE = 'kb';

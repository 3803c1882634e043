import { z } from 'zod';
import { isHttpsOrigin } from './media-policy.ts';

export const GROUP_POLICIES = ['mention', 'all', 'never'] as const;
export type GroupPolicy = (typeof GROUP_POLICIES)[number];

/**
 * Per-client reply settings with the protocol's defaults. Stored as JSON on the client row and
 * parsed with this schema whenever it is read back, so a hand-edited row cannot crash the server.
 */
export const clientSettingsSchema = z.object({
  sendUrl: z.string().max(2048).optional(),
  allowedOrigins: z.array(z.string()).default([]),
  boundAccount: z.string().min(1).max(128).optional(),
  botIds: z.array(z.string().min(1).max(128)).default([]),
  groupPolicy: z.enum(GROUP_POLICIES).default('mention'),
  pauseMinutes: z.number().min(0).max(7 * 24 * 60).default(10),
  staleMinutes: z.number().min(0).max(7 * 24 * 60).default(10),
  /** Replies wait this long after the last pending customer message... */
  quietSeconds: z.number().min(0).max(600).default(2),
  /** ...but no longer than this after the first one. */
  quietMaxSeconds: z.number().min(0).max(3600).default(10),
  fallbackText: z.string().min(1).max(2000).optional(),
  /** Which engine answers: the built-in knowledge base ("kb") or a configured engine's name. */
  engine: z.string().min(1).max(64).default('kb'),
  /**
   * https origins whose attachments the console loads without a click (src/shared/media-policy.ts).
   * Plain http is never loaded, so it cannot be listed.
   */
  mediaOrigins: z
    .array(z.string().refine(isHttpsOrigin, { message: 'must be an https origin like https://cdn.example.com (no path, no trailing slash)' }))
    .max(50)
    .default([]),
});

export type ClientSettings = z.infer<typeof clientSettingsSchema>;

export const DEFAULT_CLIENT_SETTINGS: ClientSettings = clientSettingsSchema.parse({});

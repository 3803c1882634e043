import { z } from 'zod';

/**
 * Team workflow settings (protocol v1.2, "Team workflow"), under `team` in <data-dir>/config.json.
 * They act only in team mode: at least one enabled account besides the owner.
 */
export const teamConfigSchema = z
  .strictObject({
    /** A conversation that needs a human goes to an online agent with room (fewest open first, longest wait first). */
    autoAssign: z.boolean().default(true),
    /** An agent offline this long gets their conversations that still need a human put back in the queue. */
    returnAfterOfflineMinutes: z.number().min(0).max(1440).default(2),
  })
  .default({ autoAssign: true, returnAfterOfflineMinutes: 2 });

export type TeamConfig = z.infer<typeof teamConfigSchema>;

import { z } from 'zod';

// The team-server IPC inputs, checked as they enter main; the channels and shapes are in team-ipc.ts
// (zod-free, so the preloads stay small).

/** What the user typed: a URL, or a bare host[:port] (https is assumed). */
export const teamUrlInput = z.object({ url: z.string().trim().min(1, 'give the team server\'s address').max(2048) });
/** Colon hex SHA-256, as browsers show it. */
export const fingerprintText = z.string().regex(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/i, 'a SHA-256 fingerprint is 32 colon-separated hex pairs');
export const teamConnectInput = teamUrlInput.extend({ fingerprint: fingerprintText.nullable() });
export const sessionTokenInput = z.string().min(1).max(256);


import { z } from 'zod';

/**
 * Where the next page of listConversations starts: the last row's sort key. Clients treat it as an
 * opaque string (base64url of JSON); main decodes and checks it with zod on the way in.
 * - recent: the normal list, last_message_at DESC, id.
 * - needs: the needs-you view, needs_human_since, id.
 * - match: a search past its conversation-field matches, walking message ids newest first.
 */
export const listCursorSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('recent'), at: z.number().int(), id: z.string().min(1).max(64) }).strict(),
  z.object({ k: z.literal('needs'), at: z.number().int(), id: z.string().min(1).max(64) }).strict(),
  z.object({ k: z.literal('match'), before: z.number().int().positive() }).strict(),
]);
export type ListCursor = z.infer<typeof listCursorSchema>;

export function encodeCursor(cursor: ListCursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify(cursor));
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** The cursor, or undefined for anything that is not one this service made. */
export function decodeCursor(text: string): ListCursor | undefined {
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    const json = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
    const parsed = listCursorSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

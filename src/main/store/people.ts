import type { Db } from './db.ts';

/**
 * The names integrators send for their users (protocol v1.2): one row per (client, user id),
 * the latest nickname sent winning. The transcript, the engines' context and mentions read it,
 * so a line sent without a name still shows the person's name, and a rename reaches every line.
 */
export function peopleQueries(db: Db) {
  // A repeat of the stored name writes nothing: most messages carry the name they carried before.
  const remember = db.prepare(
    `INSERT INTO people (client_id, user_id, nickname, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (client_id, user_id) DO UPDATE SET nickname = excluded.nickname, updated_at = excluded.updated_at
     WHERE nickname IS NOT excluded.nickname`,
  );
  const named = db.prepare('SELECT user_id, nickname FROM people WHERE client_id = ? AND user_id IN (SELECT value FROM json_each(?))');
  return {
    remember(clientId: string, userId: string, nickname: string, at: number): void {
      remember.run(clientId, userId, nickname, at);
    },
    /** The latest names of these users of a client; users never named are absent from the map. */
    names(clientId: string, userIds: readonly string[]): Map<string, string> {
      if (userIds.length === 0) return new Map();
      const rows = named.all(clientId, JSON.stringify([...new Set(userIds)])) as Array<{ user_id: string; nickname: string }>;
      return new Map(rows.map((r) => [r.user_id, r.nickname]));
    },
  };
}

export type PeopleQueries = ReturnType<typeof peopleQueries>;

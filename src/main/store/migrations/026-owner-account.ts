import type { Migration } from '../migrate.ts';

/**
 * Team mode: the service-wide "current operator" setting goes (protocol v1.2, section 9). The
 * identity it held becomes the owner account (an admin, the one the desktop window and the
 * console token sign in as), so replies made before keep naming the same id. An install that never
 * set an operator gets its owner account when its user first says who they are.
 */
export const migration026: Migration = {
  version: 26,
  name: 'owner-account',
  up(db) {
    db.exec(`
      ALTER TABLE agents ADD COLUMN owner INTEGER NOT NULL DEFAULT 0 CHECK (owner IN (0, 1));
      CREATE UNIQUE INDEX agents_one_owner ON agents(owner) WHERE owner = 1;
    `);
    const row = db.prepare("SELECT value FROM settings WHERE key = 'operator'").get() as { value: string } | undefined;
    const stored = row ? parseOperator(row.value) : null;
    if (stored) {
      const now = Date.now();
      // An agent with that id already (made by the CLI of 025) becomes the owner, keeping its password.
      db.prepare(
        // Capacity 0: auto-assignment gives the owner nothing until an admin says otherwise (the
        // owner often runs the desk rather than works its queue).
        `INSERT INTO agents (id, name, role, capacity, created_at, updated_at, owner) VALUES (?, ?, 'admin', 0, ?, ?, 1)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, role = 'admin', owner = 1, updated_at = excluded.updated_at`,
      ).run(stored.id, stored.name, now, now);
    }
    db.prepare("DELETE FROM settings WHERE key = 'operator'").run();
  },
};

/** The setting as 025 and earlier kept it; a hand-edited value that does not fit is dropped, as it was ignored before. */
function parseOperator(text: string): { id: string; name: string } | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const { id, name } = v as Record<string, unknown>;
    if (typeof id !== 'string' || typeof name !== 'string') return null;
    const cleanId = id.trim();
    const cleanName = name.trim();
    if (cleanId.length < 1 || cleanId.length > 64 || cleanName.length < 1 || cleanName.length > 200) return null;
    return { id: cleanId, name: cleanName };
  } catch {
    return null;
  }
}

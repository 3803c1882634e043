import type { DatabaseSync } from 'node:sqlite';

/**
 * Lets the audit table record one more action. SQLite cannot change a CHECK in place, so the
 * table is rebuilt from its own current definition (rows, ids and indexes kept), whatever actions
 * earlier migrations added: migrations that add one may then be merged in any order.
 */
export function addAuditAction(db: DatabaseSync, action: string, migration: number): void {
  const table = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get() as { sql: string } | undefined;
  if (!table) throw new Error(`migration ${migration}: no audit table`);
  const check = /CHECK \(action IN \(([^)]*)\)\)/.exec(table.sql);
  if (!check) throw new Error(`migration ${migration}: the audit table has no CHECK on its actions`);
  const actions = check[1]!;
  if (actions.includes(`'${action}'`)) return;
  const rebuilt = table.sql.replace(/^CREATE TABLE "?audit"?/, 'CREATE TABLE audit_new').replace(check[0], `CHECK (action IN (${actions}, '${action}'))`);
  const indexes = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit' AND sql IS NOT NULL").all() as Array<{ sql: string }>).map((i) => i.sql);
  const columns = (db.prepare("SELECT name FROM pragma_table_info('audit') ORDER BY cid").all() as Array<{ name: string }>).map((c) => c.name).join(', ');
  db.exec(`
    ${rebuilt};
    INSERT INTO audit_new (${columns}) SELECT ${columns} FROM audit;
    DROP TABLE audit;
    ALTER TABLE audit_new RENAME TO audit;
    ${indexes.map((sql) => `${sql};`).join('\n')}
  `);
}

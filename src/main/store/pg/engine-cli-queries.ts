import type pg from 'pg';
import type { EnginesCliStore } from '../contract.ts';
import { pgEngineQueries } from './engine-queries.ts';
import { pgKbQueries } from './kb-queries.ts';

/**
 * `engines add | list | test | remove` on PostgreSQL: the engines group's functions (engine-queries.ts)
 * and the knowledge base's entries. Every node's configuration mirror sees a change within a second.
 */
export function pgEnginesCliStore(pool: pg.Pool): EnginesCliStore {
  const { get, list, save, remove } = pgEngineQueries(pool);
  return { engines: { get, list, save, remove }, kbEntries: () => pgKbQueries(pool).all() };
}

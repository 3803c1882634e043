import type { PgMigration } from '../migrate.ts';
import { migration001 } from './001-core.ts';
import { migration002 } from './002-team.ts';
import { migration003 } from './003-knowledge.ts';
import { migration004 } from './004-rollups.ts';
import { migration005 } from './005-leases.ts';
import { migration006 } from './006-replay-signatures.ts';
import { migration007 } from './007-sharded-rollups.ts';
import { migration008 } from './008-replay-run-owners.ts';

/**
 * PostgreSQL's numbered migrations, in order. Versions 1–4 are the baseline: the schema SQLite
 * has after its migration 33 (src/main/store/migrations). A change to the schema from here on is
 * a new SQLite migration and a new one here, each with its own test. Versions 5 (leases), 6
 * (replay signatures) and 7 (sharded rollups) are PostgreSQL's alone: what several nodes need to
 * share the outbox, the reply timers and replay protection, and to count without one hot row.
 * Version 8 (replay run owners) matches SQLite's migration 34.
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [migration001, migration002, migration003, migration004, migration005, migration006, migration007, migration008];

/** The SQLite schema version that PG_MIGRATIONS' latest matches, less version 5's leases (`store copy` checks both). */
export const PG_BASELINE_SQLITE_VERSION = 34;

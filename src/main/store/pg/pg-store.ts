import type pg from 'pg';
import type { StoreContract } from '../contract.ts';
import type { InTransaction } from '../in-transaction.ts';
import { inPgTransaction } from './transaction.ts';
import type { PgQueryable } from './pool.ts';
import { pgClientQueries } from './client-queries.ts';
import { pgAccountQueries } from './account-queries.ts';
import { pgTeamQueries } from './team-queries.ts';
import { pgConversationQueries } from './conversation-queries.ts';
import { pgMessageQueries } from './message-queries.ts';
import { pgPeopleQueries, pgQuoteQueries, pgTraceQueries } from './trace-queries.ts';
import { pgIdempotencyQueries } from './idempotency-queries.ts';
import { pgRequestLogQueries } from './request-log-queries.ts';
import { pgKbQueries } from './kb-queries.ts';
import { pgProposalQueries } from './proposal-queries.ts';
import { pgProposalSourceQueries } from './proposal-source-queries.ts';
import { pgKbVectorQueries } from './kb-vector-queries.ts';
import { pgSettingsQueries } from './settings-queries.ts';
import { pgDeliveriesGroup } from './delivery-queries.ts';
import { pgConsoleQueries } from './console-queries.ts';
import { pgStatsQueries } from './stats-queries.ts';
import { pgEngineQueries } from './engine-queries.ts';
import { pgAuditQueries } from './audit-queries.ts';
import { pgCannedQueries } from './canned-queries.ts';
import { pgWorkspaceQueries } from './workspace-queries.ts';
import { pgStaffWaitQueries } from './staff-wait-queries.ts';
import { pgReplayQueries } from './replay-queries.ts';
import { pgSearchIndexQueries } from './search-index-queries.ts';

/**
 * The whole store on PostgreSQL (issue 30): every query group of the SQLite store (index.ts), with
 * the same functions and results, on one connection. On a pool each statement is a transaction of
 * its own (the console's reads); on a pool client inside inPgTransaction, the command's statements
 * commit together (pg-writer.ts). Built per call: the groups are closures over `db`, nothing else.
 */
export function pgStore(db: PgQueryable): StoreContract {
  const deliveries = pgDeliveriesGroup(db);
  const workspace = pgWorkspaceQueries(db);
  return {
    clients: pgClientQueries(db),
    accounts: pgAccountQueries(db),
    team: pgTeamQueries(db),
    conversations: pgConversationQueries(db),
    messages: pgMessageQueries(db),
    people: pgPeopleQueries(db),
    quotes: pgQuoteQueries(db),
    idempotency: pgIdempotencyQueries(db),
    requestLog: pgRequestLogQueries(db),
    kb: pgKbQueries(db),
    proposals: pgProposalQueries(db),
    proposalSources: pgProposalSourceQueries(db),
    kbVectors: pgKbVectorQueries(db),
    settings: pgSettingsQueries(db),
    deliveries,
    trace: pgTraceQueries(db, (id) => deliveries.attempts(id)),
    console: pgConsoleQueries(db, (ids) => workspace.kbQuestions(ids)),
    stats: pgStatsQueries(db),
    engines: pgEngineQueries(db),
    audit: pgAuditQueries(db),
    canned: pgCannedQueries(db),
    workspace,
    staffWait: pgStaffWaitQueries(db),
    replay: pgReplayQueries(db),
    searchIndex: pgSearchIndexQueries(db),
  };
}

/** Several calls as one transaction on a pooled connection (InTransaction): run again from the start when it lost a race to another node. */
export function pgInTransaction(pool: pg.Pool): InTransaction {
  return (work) => inPgTransaction(pool, (tx) => work(pgStore(tx)));
}

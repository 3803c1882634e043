import type { StoreContract } from '../store/contract.ts';
import type { PruneLimits } from '../store/request-log.ts';
import { assertNever } from '../../shared/assert-never.ts';
import { commitAutoReply, settleReplies, type AutoReplyCommand, type AutoReplyResult, type SettleCommand } from '../autoreply/reply-commands.ts';
import { executeDeliveryCommand, type DeliveryCommand } from '../delivery/delivery-commands.ts';
import { consoleResume, consoleStop, type StateResult } from './state-commands.ts';
import { executeWorkspaceCommand, type WorkspaceCommand, type WorkspaceResult } from './workspace-commands.ts';
import { checkStaffWait, type StaffWaitCommand, type StaffWaitResult } from './staff-wait-commands.ts';
import { executeTeamCommand, type TeamCommand, type TeamResult } from './team-commands.ts';
import type { Operator } from '../../shared/console-workspace.ts';
import { saveKbVectors, type KbVectorsCommand } from './kb-vector-commands.ts';
import { executeIngest, type IngestCommand, type Outcome } from './ingest-commands.ts';

// The endpoint's commands and their types live in ingest-commands.ts (both stores run them).
export { priorOutcome, executeIngest } from './ingest-commands.ts';
export type { IngestRequest, AnsweredReply, IngestAlert, Outcome, IngestCommand } from './ingest-commands.ts';

export type WriteCommand =
  | IngestCommand
  | { kind: 'prune_request_log'; limits: PruneLimits }
  | { kind: 'prune_idempotency'; before: number; batch: number }
  | AutoReplyCommand
  | SettleCommand
  | DeliveryCommand
  | WorkspaceCommand
  | StaffWaitCommand
  | TeamCommand
  | KbVectorsCommand
  | { kind: 'console_stop'; conversationId: string; operator: Operator; now: number }
  | { kind: 'console_resume'; conversationId: string; operator: Operator; now: number; undoStop?: boolean };

/** What a write command returns: an ingest outcome, an auto reply's fate, or a count of changes. */
export type WriteResult =
  | Outcome
  | AutoReplyResult
  | { kind: 'changed'; count: number; alert?: 'delivery_failed' }
  | StateResult
  | WorkspaceResult
  | StaffWaitResult
  | TeamResult
  | null;

/** Runs one command inside the writer's current group transaction. */
export async function executeWrite(store: StoreContract, command: WriteCommand): Promise<WriteResult> {
  switch (command.kind) {
    case 'auto_dialog':
    case 'cmd_dialog':
    case 'answered':
    case 'request_log':
    case 'request_log_count':
      return executeIngest(store, command);
    case 'prune_request_log':
      return { kind: 'changed', count: await store.requestLog.prune(command.limits) };
    case 'prune_idempotency':
      return { kind: 'changed', count: await store.idempotency.prune(command.before, command.batch) };
    case 'auto_reply':
      return await commitAutoReply(store, command);
    case 'settle_replies':
      return { kind: 'changed', count: await settleReplies(store, command) };
    case 'delivery_attempt':
    case 'delivery_cancel':
    case 'delivery_retry':
      return { kind: 'changed', ...(await executeDeliveryCommand(store, command)) };
    case 'console_stop':
      return await consoleStop(store, command.conversationId, command.operator, command.now);
    case 'console_resume':
      return await consoleResume(store, command.conversationId, command.operator, command.now, command.undoStop ?? false);
    case 'operator_reply':
    case 'console_suggestion':
    case 'resolve':
    case 'undo_resolve':
    case 'flag':
    case 'set_operator':
    case 'audit':
      return await executeWorkspaceCommand(store, command);
    case 'staff_wait':
      return await checkStaffWait(store, command);
    case 'kb_vectors':
      return await saveKbVectors(store, command);
    case 'assign':
    case 'claim':
    case 'return_to_queue':
    case 'note':
    case 'mark_read':
      return await executeTeamCommand(store, command);
    default:
      return assertNever(command, 'write command');
  }
}

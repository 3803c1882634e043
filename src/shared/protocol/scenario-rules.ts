import type { ProblemCode, FieldError } from '../problem-codes.ts';
import { COMMANDS, type MessageInfo } from './message-schema.ts';
import { checkFileContent } from './file-content.ts';
import { checkSendUrl } from './send-url.ts';
import { assertNever } from '../assert-never.ts';

export interface ScenarioContext {
  /** The client has a default send_url, so auto_dialog may omit it. */
  hasDefaultSendUrl: boolean;
  /** Named in messages that tell the integrator how to fix the client's settings. */
  clientId?: string;
  allowedOrigins?: readonly string[];
}

export interface RuleIssue extends FieldError {
  code: ProblemCode;
}

const P = 'message_info';

/**
 * The problem's `detail`: one issue reads as a sentence, its path the subject and its message the
 * predicate (`message_info.quote is required when message_type is 2`), like the schema's field
 * messages; several point at `errors`.
 */
export function issuesDetail(issues: readonly RuleIssue[]): string {
  const first = issues[0];
  if (!first) throw new Error('no issues to describe');
  return issues.length === 1 ? `${first.path} ${first.message}` : `${issues.length} problems; see errors`;
}

function nonEmpty(s: string | undefined): s is string {
  return s !== undefined && s !== '';
}

/**
 * Section 2's scenario rules, run after the schema passed. Every issue is collected so the
 * integrator fixes them all in one round; the response code is the first issue's. Each message is
 * the predicate of its path ("is ...", "must ..."), so `issuesDetail` reads as a sentence.
 */
export function checkScenarioRules(info: MessageInfo, ctx: ScenarioContext): RuleIssue[] {
  const issues: RuleIssue[] = [];
  const add = (code: ProblemCode, field: string, message: string): void => {
    issues.push({ code, path: `${P}.${field}`, message });
  };
  const isAuto = info.event_type === 'auto_dialog';
  const files = info.files_info ?? [];
  const hasContent = nonEmpty(info.content);

  if (!isAuto && info.send_url !== undefined) add('field_not_allowed', 'send_url', 'is allowed only with auto_dialog');
  if (!isAuto && info.at_list !== undefined) add('field_not_allowed', 'at_list', 'is allowed only with auto_dialog');

  if (!nonEmpty(info.from_user_id) && !nonEmpty(info.group_id)) {
    add('missing_sender', 'from_user_id', 'is required when group_id is empty or absent: one of them must identify the sender');
  }

  files.forEach((file, i) => {
    const check = checkFileContent(file.content);
    if (!check.ok) add(check.tooLarge ? 'file_too_large' : 'validation_failed', `files_info[${i}].content`, check.message);
  });

  if (info.message_type === 2 && info.quote === undefined) add('validation_failed', 'quote', 'is required when message_type is 2');

  switch (info.event_type) {
    case 'auto_dialog': {
      if (info.from_user_type === undefined) add('validation_failed', 'from_user_type', 'is required for auto_dialog');
      if (hasContent && files.length > 0) {
        add('mixed_payload', 'files_info', 'must not come with content in auto_dialog: send text alone or files alone, as separate messages');
      } else if (files.length > 1) {
        const types = [...new Set(files.map((f) => String(f.file_type)))];
        if (types.length > 1) add('mixed_payload', 'files_info', `must all have one file_type in auto_dialog, got ${types.join(', ')}: send each type as a message of its own`);
      }
      if (info.send_url !== undefined) {
        const url = checkSendUrl(info.send_url, ctx.allowedOrigins);
        if (!url.ok) add(url.code, 'send_url', url.message);
      } else if (!ctx.hasDefaultSendUrl) {
        const id = ctx.clientId ?? 'ID';
        add('validation_failed', 'send_url', `is required: client ${id} has no default send_url configured; put send_url in this message, or set a default with \`npm run cli -- clients set ${id} --send-url URL\``);
      }
      break;
    }
    case 'assist_dialog':
      if (info.msg_id === undefined) add('validation_failed', 'msg_id', 'is required for assist_dialog');
      break;
    case 'cmd_dialog': {
      const command = info.content?.trim() ?? '';
      if (command === '') add('validation_failed', 'content', 'is required for cmd_dialog: it holds the command');
      else if (!(COMMANDS as readonly string[]).includes(command)) {
        add('unknown_command', 'content', `holds the unknown command "${command.slice(0, 64)}"; supported: ${COMMANDS.join(', ')}`);
      }
      break;
    }
    case 'website_dialog':
      break;
    default:
      assertNever(info.event_type, 'event_type');
  }

  if (!hasContent && files.length === 0 && info.event_type !== 'cmd_dialog') {
    add('validation_failed', 'content', 'is required when files_info is empty or absent: send text or files');
  }
  return issues;
}

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

function nonEmpty(s: string | undefined): s is string {
  return s !== undefined && s !== '';
}

/**
 * Section 2's scenario rules, run after the schema passed. Every issue is collected so the
 * integrator fixes them all in one round; the response code is the first issue's.
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
    add('missing_sender', 'from_user_id', 'from_user_id and group_id are both empty: one of them must identify the sender');
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
        add('mixed_payload', 'files_info', 'auto_dialog carries text alone or files alone, not both');
      } else if (files.length > 1 && new Set(files.map((f) => String(f.file_type))).size > 1) {
        add('mixed_payload', 'files_info', 'all files of one auto_dialog message must share one file_type');
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
        add('unknown_command', 'content', `unknown command "${command.slice(0, 64)}"; supported: ${COMMANDS.join(', ')}`);
      }
      break;
    }
    case 'website_dialog':
      break;
    default:
      assertNever(info.event_type, 'event_type');
  }

  if (!hasContent && files.length === 0 && info.event_type !== 'cmd_dialog') {
    add('validation_failed', 'content', 'content or files_info is required');
  }
  return issues;
}

import type { TFunction } from 'i18next';
import type { CommandLine, ConversationSummary } from '../../../shared/console-api.ts';
import { assertNever } from '../../../shared/assert-never.ts';

/**
 * A stop, resume, resolve, undone-resolve or flag line in words, the same in the transcript and in the
 * list's preview: what happened, from where, and who did it when the line says (older console
 * lines name nobody).
 */
export function commandText(t: TFunction, c: CommandLine & { undo?: boolean }): string {
  const who = c.operator ? { name: c.operator } : null;
  if (c.command === 'stop_auto_reply') {
    if (c.source === 'integration') return t('transcript.stopByIm');
    return who ? t('transcript.stopByConsoleWho', who) : t('transcript.stopByConsole');
  }
  if (c.command === 'resume_auto_reply') {
    const line = who ? t('transcript.resumeByConsoleWho', who) : t('transcript.resumeByConsole');
    return c.undo ? `${line} ${t('transcript.undoOfStop')}` : line;
  }
  if (c.command === 'resolve') return who ? t('transcript.resolvedWho', who) : t('transcript.resolved');
  if (c.command === 'undo_resolve') return who ? t('transcript.resolveUndoneWho', who) : t('transcript.resolveUndone');
  if (c.command === 'flag_human') {
    const line = who ? t('transcript.flaggedWho', who) : t('transcript.flagged');
    return c.note ? t('transcript.withNote', { line, note: c.note }) : line;
  }
  return c.command;
}

/** A transcript command line's message_info as a CommandLine. */
export function commandOf(content: string, info: Record<string, unknown> | undefined): CommandLine & { undo: boolean } {
  const operator = info?.['operator'] as { name?: unknown } | undefined;
  return {
    command: content,
    source: info?.['source'] === 'console' ? 'console' : 'integration',
    operator: typeof operator?.name === 'string' ? operator.name : null,
    undo: info?.['undo'] === true,
    note: typeof info?.['note'] === 'string' ? info['note'] : null,
  };
}

/** The list's preview of the last line: a command reads as the transcript says it; a reply says who gave it. */
export function previewOf(t: TFunction, c: Pick<ConversationSummary, 'lastText' | 'lastCommand' | 'lastReply' | 'matchText' | 'lastSpeaker' | 'groupId'>): string {
  if (c.matchText) return c.matchText;
  // A flag's note is why a colleague should open it: first, where a one-line preview cuts the rest.
  if (c.lastCommand?.command === 'flag_human' && c.lastCommand.note && c.lastCommand.operator) return t('list.preview.flagNote', { note: c.lastCommand.note, who: c.lastCommand.operator });
  if (c.lastCommand) return commandText(t, c.lastCommand);
  if (c.lastReply) return t('list.preview.reply', { who: c.lastReply.by === 'operator' ? (c.lastReply.operator ?? t('list.preview.operator')) : t('list.preview.bot'), text: c.lastText ?? '' });
  const who = lineSpeaker(t, c);
  return who ? t('list.preview.reply', { who, text: c.lastText ?? '' }) : (c.lastText ?? '');
}

/**
 * Who said the last line, where a preview must say so: a group member (a group has many), staff
 * or the AI writing in the IM (their line would read as the customer's). A 1:1 customer's own
 * line needs no name: the row is theirs.
 */
function lineSpeaker(t: TFunction, c: Pick<ConversationSummary, 'lastSpeaker' | 'groupId'>): string | null {
  const s = c.lastSpeaker;
  if (!s) return null;
  const named = s.name ?? s.id;
  switch (s.role) {
    case 'customer':
      return c.groupId ? named : null;
    case 'staff':
      return named ?? t('transcript.role.staff');
    case 'ai':
      return named ?? t('list.preview.bot');
    case 'command':
      return null;
    default:
      return assertNever(s.role, 'speaker role');
  }
}

/** Needs you's line: what the customer asked, by whom in a group (else the list's preview). */
export function askedOf(t: TFunction, c: ConversationSummary): string {
  if (c.lastCommand?.command === 'flag_human' || !c.lastCustomerText) return previewOf(t, c);
  return c.groupId && c.lastCustomerBy ? t('list.preview.reply', { who: c.lastCustomerBy, text: c.lastCustomerText }) : c.lastCustomerText;
}

import { i18n } from './index.ts';

/**
 * The service writes why-notes, engine causes and delivery errors in English. The ones it is
 * known to write are translated here by their shape; anything else is shown as given (an
 * engine's or a receiver's own words, which the console cannot know in advance).
 */
interface Rule {
  re: RegExp;
  /** The translation's key. */
  key: string;
  vars?: (m: RegExpExecArray) => Record<string, string>;
}

const by = (who: string): string => (who === 'the console' ? i18n.t('work.note.by.console') : who === 'stop_auto_reply' ? i18n.t('work.note.by.command') : who);

const RULES: Rule[] = [
  { re: /^auto-reply stopped by (.+) before the reply was made$/, key: 'work.note.stoppedBefore', vars: (m) => ({ by: by(m[1]!) }) },
  { re: /^auto-reply (paused|stopped) before the reply was made$/, key: 'work.note.tookOver', vars: (m) => ({ state: i18n.t(`work.note.state.${m[1]}`) }) },
  { re: /^auto-reply (paused|stopped) when the delivery was due$/, key: 'work.note.dueTookOver', vars: (m) => ({ state: i18n.t(`work.note.state.${m[1]}`) }) },
  { re: /^auto-reply stopped by (.+)$/, key: 'work.note.stoppedBy', vars: (m) => ({ by: by(m[1]!) }) },
  { re: /^waited past the stale limit \(was the service down\?\)$/, key: 'work.note.stale' },
  { re: /^no confident answer$/, key: 'work.note.noConfident' },
  { re: /^best match scored ([\d.]+), below ([\d.]+)$/, key: 'work.note.kbLow', vars: (m) => ({ score: m[1]!, threshold: m[2]! }) },
  { re: /^no knowledge-base entry matched$/, key: 'work.note.kbNoMatch' },
  { re: /^no customer text to answer$/, key: 'work.note.noText' },
  { re: /^engine "(.+)" is not configured$/, key: 'work.note.engineMissing', vars: (m) => ({ engine: m[1]! }) },
  { re: /^HTTP (\d{3})$/, key: 'work.note.http', vars: (m) => ({ status: m[1]! }) },
  { re: /^cancelled by (.+) from the console$/, key: 'deliveryActions.cancelledBy', vars: (m) => ({ name: m[1]! }) },
];

export function translateNote(note: string): string {
  for (const rule of RULES) {
    const m = rule.re.exec(note);
    if (m) return i18n.t(rule.key, rule.vars?.(m) ?? {});
  }
  return note;
}

/**
 * Personal data out of a text before it is kept in a knowledge-base proposal: an approved
 * proposal becomes an answer the bot gives everyone, so nothing of one customer may stay in it.
 * Each kind is replaced by a placeholder the reviewer sees and can edit around.
 *
 * Patterns are deliberately broad (a false mask costs a reviewer one edit; a missed phone number
 * would be sent to every customer who asks), and ASCII runs are bounded by lookarounds on ASCII
 * letters and digits only, so a number written straight after Chinese text ("订单号12345678") is
 * still found.
 */

export const PLACEHOLDERS = { name: '[name]', email: '[email]', phone: '[phone]', number: '[number]', url: '[url]' } as const;

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;
const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>"'，。！？、）)]+/giu;
// A query string, a fragment, or a path segment that looks like a key (16+ letters and digits mixed).
const URL_SECRET = /[?#]|\/(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{16,}/;
// An international or separated phone number: +, brackets, spaces, dots or dashes between 7-15 digits.
const PHONE = /(?<![A-Za-z0-9])(?:\+\d[\d\s().-]{6,}\d|\(?\d{2,4}\)?[\s.-]\d{3,4}[\s.-]\d{3,4})(?![A-Za-z0-9])/g;
// A Chinese mobile number: 11 digits starting 13-19.
const CN_MOBILE = /(?<![A-Za-z0-9])1[3-9]\d{9}(?![A-Za-z0-9])/g;
// An order or account number: a run of 5+ digits, or a code of letters and digits (and - or _)
// with at least four digits, such as AB12345 or ORD-2024-8812 (not COVID-19 or MP3).
const LONG_DIGITS = /(?<![A-Za-z0-9])\d{5,}(?![A-Za-z0-9])/g;
const CODE = /(?<![A-Za-z0-9_-])(?=(?:[A-Za-z_-]*\d){4})(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]{3,}(?![A-Za-z0-9_-])/g;
// "my name is Ann Lee", "I'm called Bo", "Name: Ann": one or two capitalised words after it (case
// matters: "my name is not on the order" names nobody).
const NAME_EN = /\b([Mm]y name is|[Mm]y name's|I am called|I'm called|[Nn]ame:)\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)/gu;
// 我叫王小明 / 我的名字是李雷: two to four Han characters (a Chinese name's length), or a Latin name.
// Not "我是…": it starts far more sentences ("我是想问…") than it names someone.
const NAME_ZH = /(我叫|我的名字是|我的名字叫|本人姓名[:：]?)\s*(\p{Script=Han}{2,4}|\p{Script=Latin}[\p{L}'-]+)/gu;
// Words after "my name is" / "我叫" that are not a name.
const NOT_NAMES = new Set(['The', 'A', 'An', 'Not', 'On', 'In', 'Wrong', 'Missing', '什么', '什么名字']);

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A known name as a pattern: whole words for Latin script (any case), as written for Han. */
function namePattern(name: string): RegExp | null {
  const n = name.trim();
  // One character would mask too much of ordinary text ("A", "王").
  if ([...n].length < 2) return null;
  return /^[\p{Script=Latin}\d\s'.-]+$/u.test(n) ? new RegExp(`(?<![\\p{L}\\p{N}])${escape(n)}(?![\\p{L}\\p{N}])`, 'giu') : new RegExp(escape(n), 'gu');
}

/**
 * `names`: names known for the people in the conversation (the customer's nicknames, the
 * operator's name), masked wherever they appear; a name said in the text ("my name is X",
 * "我叫X") is masked too.
 */
export function maskPersonalData(text: string, names: readonly string[] = []): string {
  let out = text.replace(URL_RE, (url) => (URL_SECRET.test(url.replace(/^https?:\/\//i, '')) ? PLACEHOLDERS.url : url));
  out = out.replace(EMAIL, PLACEHOLDERS.email);
  out = out.replace(PHONE, (m) => (m.replace(/\D/g, '').length >= 7 ? PLACEHOLDERS.phone : m));
  out = out.replace(CN_MOBILE, PLACEHOLDERS.phone);
  out = out.replace(LONG_DIGITS, PLACEHOLDERS.number);
  out = out.replace(CODE, PLACEHOLDERS.number);
  out = out.replace(NAME_EN, (m, lead: string, name: string) => (NOT_NAMES.has(name.split(/\s+/)[0]!) ? m : `${lead} ${PLACEHOLDERS.name}`));
  out = out.replace(NAME_ZH, (m, lead: string, name: string) => (NOT_NAMES.has(name) ? m : `${lead}${PLACEHOLDERS.name}`));
  // A Latin full name's parts too (an operator writes "Hi Carol" to Carol Jones); longest first, so
  // "Ann Lee" is one [name], not "[name] Lee".
  const parts = names.flatMap((n) => (/^[\p{Script=Latin}\s'.-]+$/u.test(n.trim()) ? n.trim().split(/\s+/).filter((w) => w.length >= 3) : []));
  for (const name of [...new Set([...names, ...parts])].sort((a, b) => b.length - a.length)) {
    const re = namePattern(name);
    if (re) out = out.replace(re, PLACEHOLDERS.name);
  }
  return out;
}

import { stemmer } from 'stemmer';
import { eng as ENGLISH_STOP_WORDS, zho as CHINESE_STOP_WORDS } from 'stopword';
import { chineseWords } from './chinese-words.ts';
import { SYNONYM_GROUPS } from './synonyms.ts';

/**
 * Text to matching units: English words without their endings (Porter stemmer) and without the
 * words every question has (stop words), Chinese words (jieba), and every word or phrase of a
 * synonym group as the group's one unit. The knowledge base and the customer's messages go
 * through the same steps, so "forgotten passwords" and "forgot my password" meet.
 */

export interface Unit {
  unit: string;
  /** How much the unit says about the question: a number or a single Chinese character says less than a word. */
  weight: number;
}

const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/u;
const TOKEN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu;
const DIGITS = /^\p{N}+$/u;

/** Words of a chat the libraries' lists lack: greetings and politeness carry no topic. */
const CHAT_WORDS = ['not', 'hi', 'hello', 'hey', 'please', 'pls', 'thanks', 'thank', 'thx', 'ok', 'okay', 'does', 'doe', 'just', 'need', 'want', 'know', 'tell', 'help', 'anyone', 'guys', 'u', 'ur', 'im', 'yes', 'no'];
const CHINESE_CHAT_WORDS = ['你好', '您好', '请问', '谢谢', '麻烦', '怎么', '怎么办', '怎样', '如何', '什么', '吗', '呢', '吧', '啊', '呀', '哦', '嘛', '可以', '能', '能不能', '可不可以', '想', '要', '需要', '一下', '我们', '你们', '现在', '还是', '没有'];
const STOP = new Set([...ENGLISH_STOP_WORDS, ...CHAT_WORDS, ...CHINESE_STOP_WORDS, ...CHINESE_CHAT_WORDS]);

const NUMBER_WEIGHT = 0.3;
const CJK_CHAR_WEIGHT = 0.5;

/** "can't" → "can not", "I've" → "I": so contractions match and stop words are found. */
function expandContractions(text: string): string {
  return text
    .replace(/[’‘`]/g, "'")
    .replace(/\bcan't\b|\bcannot\b/g, 'can not')
    .replace(/\bwon't\b/g, 'will not')
    .replace(/n't\b/g, ' not')
    .replace(/'(m|re|ve|ll|d|s)\b/g, '');
}

/** Latin words are stemmed; Chinese words stay as they are. */
const keyOf = (word: string): string => (CJK_RUN.test(word) ? word : stemmer(word));

interface SynonymTable {
  /** Phrase (keys joined by spaces) or word key → the group's unit. */
  unitOf: Map<string, string>;
  /** Longest phrase, in words. */
  longest: number;
}

let synonyms: SynonymTable | null = null;

function synonymTable(): SynonymTable {
  if (synonyms) return synonyms;
  const unitOf = new Map<string, string>();
  let longest = 1;
  for (const group of SYNONYM_GROUPS) {
    const unit = `~${group[0]}`;
    for (const term of group) {
      const words = CJK_RUN.test(term) ? [term] : expandContractions(term.toLowerCase()).match(/[\p{L}\p{N}]+/gu) ?? [];
      const key = words.map(keyOf).join(' ');
      // The first group naming a word keeps it: a word has one meaning here.
      if (key !== '' && !unitOf.has(key)) unitOf.set(key, unit);
      longest = Math.max(longest, words.length);
    }
  }
  synonyms = { unitOf, longest };
  return synonyms;
}

/** The words of a text, in order: Latin words and the jieba words of each Chinese run. */
function words(text: string): string[] {
  const out: string[] = [];
  for (const [token] of expandContractions(text.normalize('NFKC').toLowerCase()).matchAll(TOKEN)) {
    if (CJK_RUN.test(token)) out.push(...chineseWords(token));
    else out.push(token);
  }
  return out;
}

export function textUnits(text: string): Unit[] {
  const { unitOf, longest } = synonymTable();
  const list = words(text);
  const keys = list.map(keyOf);
  const units: Unit[] = [];
  for (let i = 0; i < list.length; ) {
    // The longest synonym phrase starting here, so "how long" is one unit before "how" is dropped.
    let matched = 0;
    for (let n = Math.min(longest, list.length - i); n >= 2 && matched === 0; n--) {
      const unit = unitOf.get(keys.slice(i, i + n).join(' '));
      if (unit) {
        units.push({ unit, weight: 1 });
        matched = n;
      }
    }
    if (matched > 0) {
      i += matched;
      continue;
    }
    const word = list[i]!;
    const key = keys[i]!;
    i++;
    const unit = unitOf.get(key);
    if (unit) units.push({ unit, weight: 1 });
    else if (STOP.has(word)) continue;
    else if (DIGITS.test(word)) units.push({ unit: word, weight: NUMBER_WEIGHT });
    else if (CJK_RUN.test(word) && [...word].length === 1) units.push({ unit: word, weight: CJK_CHAR_WEIGHT });
    else units.push({ unit: key, weight: 1 });
  }
  return units;
}

/** Whether the text is written mostly in Chinese (or another CJK script). */
export function isCjkText(text: string): boolean {
  let cjk = 0;
  let latin = 0;
  for (const [token] of text.matchAll(TOKEN)) {
    if (CJK_RUN.test(token)) cjk += [...token].length;
    else latin += 1;
  }
  return cjk > latin;
}

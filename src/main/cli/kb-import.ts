import { z } from 'zod';
import { describeIssue } from './flag-errors.ts';

export interface QaPair {
  question: string;
  answer: string;
  /** "Also asked as"; empty when the file has none. */
  phrasings: string[];
}

export class ImportError extends Error {}

const phrasingSchema = z.string().trim().min(1).max(2000);
const pairSchema = z.strictObject({
  question: z.string().trim().min(1).max(2000),
  answer: z.string().trim().min(1).max(20_000),
  phrasings: z.array(phrasingSchema).max(100).default([]),
});

/** A CSV cell of phrasings: one per line, or separated by " | " as a spreadsheet cell allows. */
const splitPhrasings = (cell: string): string[] =>
  cell
    .split(/\r?\n|\s\|\s/)
    .map((p) => p.trim())
    .filter((p) => p !== '');

/** "answer is required", "question must be at most 2000 characters": the file's field names. */
function problems(error: z.ZodError, item: unknown): string {
  const fields = item !== null && typeof item === 'object' ? (item as Record<string, unknown>) : {};
  return error.issues.map((x) => (x.path.length ? `${x.path.join('.')} ${describeIssue(x, fields[String(x.path[0])])}` : x.message)).join('; ');
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Offsets where each element of the top-level JSON array starts, for error messages. */
function elementOffsets(text: string): number[] {
  const starts: number[] = [];
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (/\s/.test(c)) continue;
    if (depth === 1 && expectElement && c !== ']') {
      starts.push(i);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 1) expectElement = true;
  }
  return starts;
}

export function parseJsonPairs(text: string): QaPair[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const pos = /position (\d+)/.exec((error as Error).message);
    const where = pos ? ` at line ${lineAt(text, Number(pos[1]))}` : '';
    throw new ImportError(`not valid JSON${where}: ${(error as Error).message}`);
  }
  if (!Array.isArray(data)) throw new ImportError('JSON file must hold an array of {"question", "answer", "phrasings"?} objects');
  const offsets = elementOffsets(text);
  return data.map((item, i) => {
    const parsed = pairSchema.safeParse(item);
    if (!parsed.success) {
      const line = offsets[i] === undefined ? '' : ` (line ${lineAt(text, offsets[i])})`;
      throw new ImportError(`entry ${i + 1}${line}: ${problems(parsed.error, item)}`);
    }
    return parsed.data;
  });
}

/** RFC 4180 records with the line each starts on (quoted fields may span lines). */
function csvRecords(text: string): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let recordLine = 1;
  let i = 0;
  let quotedAt = 0;
  const endRecord = (): void => {
    fields.push(field);
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: recordLine, fields });
    fields = [];
    field = '';
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' && field === '') {
      quotedAt = line;
      i++;
      for (;;) {
        if (i >= text.length) throw new ImportError(`line ${quotedAt}: quoted field is never closed`);
        const d = text[i]!;
        if (d === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        if (d === '\n') line++;
        field += d;
        i++;
      }
      const next = text[i];
      if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
        throw new ImportError(`line ${line}: unexpected character after a closing quote`);
      }
      continue;
    }
    if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      if (c === '"') throw new ImportError(`line ${line}: a quote inside an unquoted field (quote the whole field and double the quote)`);
      field += c;
    }
    i++;
  }
  if (field !== '' || fields.length > 0) endRecord();
  return records;
}

/** CSV with a header naming the question and answer columns, and optionally phrasings (others are refused). */
export function parseCsvPairs(text: string): QaPair[] {
  const records = csvRecords(text.replace(/^\uFEFF/, ''));
  const header = records.shift();
  if (!header) throw new ImportError('CSV file is empty; expected a header "question,answer" or "question,answer,phrasings"');
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const q = names.indexOf('question');
  const a = names.indexOf('answer');
  const p = names.indexOf('phrasings');
  const known = 2 + (p >= 0 ? 1 : 0);
  if (q < 0 || a < 0 || names.length !== known) {
    throw new ImportError(`line ${header.line}: header must be "question,answer" or "question,answer,phrasings", got "${header.fields.join(',')}"`);
  }
  return records.map((r) => {
    if (r.fields.length !== known) throw new ImportError(`line ${r.line}: expected ${known} fields, found ${r.fields.length}`);
    const pair = { question: r.fields[q], answer: r.fields[a], phrasings: p >= 0 ? splitPhrasings(r.fields[p]!) : [] };
    const parsed = pairSchema.safeParse(pair);
    if (!parsed.success) throw new ImportError(`line ${r.line}: ${problems(parsed.error, pair)}`);
    return parsed.data;
  });
}

export function parsePairs(fileName: string, text: string): QaPair[] {
  const pairs = /\.csv$/i.test(fileName) ? parseCsvPairs(text) : /\.json$/i.test(fileName) ? parseJsonPairs(text) : null;
  if (pairs === null) throw new ImportError(`${fileName}: unknown file type; use .json (array of {question, answer, phrasings?}) or .csv`);
  if (pairs.length === 0) throw new ImportError(`${fileName}: no entries to import`);
  return pairs;
}

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Reading docs/protocol.md the way its tests need: its tagged code blocks, sections and tables,
 * shared by the test files that run the document against the real server.
 */
export const ROOT = new URL('../../', import.meta.url).pathname;
export const DOC_PATH = join(ROOT, 'docs', 'protocol.md');
export const DOC = readFileSync(DOC_PATH, 'utf8');

export function blocks(tag: string): string[] {
  const re = new RegExp('```[a-z]+ ' + tag + '\\n([\\s\\S]*?)```', 'g');
  return [...DOC.matchAll(re)].map((m) => m[1]!);
}

export function block(tag: string): string {
  const found = blocks(tag);
  assert.equal(found.length, 1, `exactly one block tagged ${tag}`);
  return found[0]!;
}

/** The text under a heading, up to the next heading of the same or a higher level. */
export function section(heading: string): string {
  const start = DOC.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The cells of every table row under a heading (header first, separator rows left out). */
export function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[-| ]+\|$/.test(l))
    .map((l) => l.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
}

export const unquote = (cell: string): string => /^`([^`]+)`/.exec(cell)?.[1] ?? cell;

/** White space collapsed, so a sentence can be found whatever the line breaks. */
export const flat = (text: string): string => text.replace(/\s+/g, ' ');

export function has(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

/**
 * Writes a doc block as a module next to the tests (so `canonicalize` resolves) and imports it.
 * The names match the .gitignore patterns of these temporary files.
 */
export async function importBlock<T>(name: string, source: string): Promise<{ mod: T; cleanup: () => void }> {
  const kind = name.startsWith('receiver') ? 'receiver' : 'node';
  const file = join(ROOT, 'test', `.readme-${kind}-protocol-doc-${name}-${process.pid}.mjs`);
  writeFileSync(file, source);
  return { mod: (await import(file)) as T, cleanup: () => rmSync(file, { force: true }) };
}

/** Keys and value types, recursively: what an example promises about a real message. */
export function shape(v: unknown): unknown {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.map(shape);
  if (typeof v === 'object') {
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]));
  }
  return typeof v;
}

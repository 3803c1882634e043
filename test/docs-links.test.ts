import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = new URL('../', import.meta.url).pathname;
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every relative link of a page, outside code blocks and code spans. */
function linksOf(markdown: string): string[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/i.test(href));
}

describe('documentation links', () => {
  it('README links every page in docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const pages = readdirSync(join(ROOT, 'docs')).filter((f) => statSync(join(ROOT, 'docs', f)).isFile());
    assert.ok(pages.length >= 10, 'docs/ has its pages');
    for (const file of pages) assert.ok(readme.includes(`](docs/${file}`), `README does not link docs/${file}`);
  });

  it('README stays a front door: under 15 KB, the rest in docs/', () => {
    const bytes = statSync(join(ROOT, 'README.md')).size;
    assert.ok(bytes < 15_360, `README.md is ${bytes} bytes; move detail into a page of docs/ (at most 15,360)`);
  });

  it('every image in docs/images is shown by a page, and together they stay small', () => {
    const images = readdirSync(join(ROOT, 'docs', 'images'));
    const pages = PAGES.map((page) => readFileSync(join(ROOT, page), 'utf8')).join('\n');
    for (const image of images) assert.ok(pages.includes(`](images/${image})`), `no page shows docs/images/${image}`);
    const bytes = images.reduce((sum, image) => sum + statSync(join(ROOT, 'docs', 'images', image)).size, 0);
    assert.ok(bytes < 1_500_000, `docs/images holds ${bytes} bytes: compress them (docs/console.md says how)`);
  });

  it('every relative link in README and docs/ reaches a file in the repository, and its #anchor a heading there', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const href of linksOf(readFileSync(join(ROOT, page), 'utf8'))) {
        const [path, anchor] = href.split('#') as [string, string | undefined];
        const target = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
        if (relative(ROOT, target).startsWith('..')) broken.push(`${page}: ${href} points outside the repository`);
        else if (!existsSync(target)) broken.push(`${page}: ${href} does not exist`);
        else if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
          broken.push(`${page}: ${href} has no heading #${anchor}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('no page sends the reader to the contract outside the repository', () => {
    for (const page of PAGES) assert.doesNotMatch(readFileSync(join(ROOT, page), 'utf8'), /shared\/protocol\.md/, page);
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cut_for_search, initSync } from 'jieba-wasm/web';

/**
 * Chinese word segmentation (jieba, compiled to WebAssembly): Chinese has no spaces, and matching
 * on words ("邮箱", "地址") rather than on every pair of characters is what lets "怎么改邮箱" find
 * "如何修改邮箱地址" without "箱地" matching anything. Search mode also gives the parts of long
 * words ("邮箱地址" → "邮箱", "地址", "邮箱地址"), so a customer's shorter word still matches.
 */

let ready = false;

/**
 * Where the 4 MB dictionary-and-code file is: beside the bundle in a build (electron.vite.config.ts
 * copies it to out/main), or in the package when run from source.
 */
function wasmPath(): string {
  const candidates = [new URL('./jieba_rs_wasm_bg.wasm', import.meta.url), new URL('../jieba_rs_wasm_bg.wasm', import.meta.url)];
  try {
    candidates.push(new URL('./jieba_rs_wasm_bg.wasm', import.meta.resolve('jieba-wasm/web')));
  } catch {
    // A packaged app has no node_modules: the copy beside the bundle is the one.
  }
  for (const url of candidates) {
    if (url.protocol === 'file:' && existsSync(url)) return fileURLToPath(url);
  }
  throw new Error('jieba_rs_wasm_bg.wasm not found beside the bundle nor in node_modules/jieba-wasm');
}

/** Loaded on the first Chinese text (about 15 ms), so English-only installations never pay for it. */
function load(): void {
  if (ready) return;
  initSync({ module: readFileSync(wasmPath()) });
  ready = true;
}

/** The words of a run of Chinese characters, long words followed by their parts. */
export function chineseWords(text: string): string[] {
  load();
  return cut_for_search(text, true);
}

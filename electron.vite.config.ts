import { resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { CONSOLE_CSP_DEV_META, CONSOLE_CSP_META } from './src/shared/csp.ts';

/**
 * Writes the console's CSP into index.html as the first element of <head>. The desktop window
 * loads file://, where a response header cannot carry a policy; a <meta> applies to everything
 * parsed after it, so it must precede every script. The policy text lives in src/shared/csp.ts.
 */
export function consoleCspMeta(): Plugin {
  let dev = false;
  return {
    name: 'switchboard:console-csp',
    configResolved(config) {
      dev = config.command === 'serve';
    },
    transformIndexHtml: {
      // Last hook, so its head-prepend lands before any tag another plugin prepended.
      order: 'post',
      handler(html) {
        if (/http-equiv\s*=\s*["']?content-security-policy/i.test(html)) {
          throw new Error('src/renderer/index.html must not carry its own CSP: the build writes the one from src/shared/csp.ts');
        }
        return { html, tags: [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: dev ? CONSOLE_CSP_DEV_META : CONSOLE_CSP_META }, injectTo: 'head-prepend' }] };
      },
    },
  };
}

/**
 * The Chinese word segmenter's WebAssembly file (src/main/engines/text/chinese-words.ts reads it
 * beside the bundle): the bundler follows imports, not this file read.
 */
function jiebaWasm(): Plugin {
  return {
    name: 'switchboard-jieba-wasm',
    generateBundle() {
      const file = fileURLToPath(new URL('./jieba_rs_wasm_bg.wasm', import.meta.resolve('jieba-wasm/web')));
      this.emitFile({ type: 'asset', fileName: 'jieba_rs_wasm_bg.wasm', source: readFileSync(file) });
    },
  };
}

// Conventional layout: src/main/index.ts, src/preload/index.ts, src/renderer/index.html -> out/.
export default defineConfig({
  main: {
    // The database writer, the engines and the console's reads run in worker threads: their entries are built beside the main bundle.
    // Dependencies are bundled so out/ is the whole app: the packaging step (resources/package-app.ts)
    // puts out/ into app.asar without a node_modules folder.
    plugins: [jiebaWasm()],
    build: {
      externalizeDeps: false,
      rollupOptions: { input: { index: resolve('src/main/index.ts'), 'writer-worker': resolve('src/main/writer-worker.ts'), 'engine-worker': resolve('src/main/engine-worker.ts'), 'reader-worker': resolve('src/main/reader-worker.ts') } },
    },
  },
  preload: {
    // A sandboxed preload cannot require() modules: bundle everything into one CommonJS file.
    build: { externalizeDeps: false, rollupOptions: { input: { index: resolve('src/preload/index.ts'), team: resolve('src/preload/team.ts') }, output: { format: 'cjs' } } },
  },
  renderer: {
    root: resolve('src/renderer'),
    build: { rollupOptions: { input: { index: resolve('src/renderer/index.html') } } },
    plugins: [react(), consoleCspMeta()],
  },
});

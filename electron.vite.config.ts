import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

// Conventional layout: src/main/index.ts, src/preload/index.ts, src/renderer/index.html -> out/.
export default defineConfig({
  main: {
    // The database writer runs in a worker thread: its entry is built beside the main bundle.
    build: { rollupOptions: { input: { index: resolve('src/main/index.ts'), 'writer-worker': resolve('src/main/writer-worker.ts') } } },
  },
  preload: {
    // A sandboxed preload cannot require() modules: bundle everything into one CommonJS file.
    build: { externalizeDeps: false, rollupOptions: { input: { index: resolve('src/preload/index.ts') }, output: { format: 'cjs' } } },
  },
  renderer: {
    root: resolve('src/renderer'),
    build: { rollupOptions: { input: { index: resolve('src/renderer/index.html') } } },
    plugins: [react()],
  },
});

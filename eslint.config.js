// @ts-check
import tseslint from 'typescript-eslint';

/** Where an import may point: the runtime layering of the house style, enforced. */
const node = ['node:*', 'fs', 'path', 'os', 'http', 'https', 'net', 'crypto', 'child_process', 'worker_threads', 'url', 'util', 'stream', 'events'];
const pattern = (group, message) => ({ group, message });

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use a const array and a union type: enums are not erasable TypeScript.' }],
    },
  },
  {
    files: ['src/shared/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          pattern(node, 'src/shared is pure TypeScript: no Node built-ins.'),
          pattern(['electron', 'react-dom', 'react-dom/*'], 'src/shared runs everywhere: no Electron, no DOM.'),
          pattern(['**/main/**', '**/renderer/**', '**/preload/**'], 'src/shared imports nothing but shared.'),
        ],
      }],
    },
  },
  {
    // Tests of shared code run on Node's test runner; the code under test stays pure.
    files: ['src/shared/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [pattern(node.filter((n) => n !== 'node:*').concat(['node:*', '!node:test', '!node:assert', '!node:assert/strict']), 'Shared tests may use node:test and node:assert only.')],
      }],
    },
  },
  {
    files: ['src/renderer/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          pattern(node, 'The renderer has no Node: talk to main through the console API.'),
          pattern(['electron'], 'The renderer has no Electron: use the preload bridge.'),
          pattern(['**/main/**', '**/preload/**'], 'The renderer may import only shared.'),
        ],
      }],
    },
  },
  {
    files: ['src/preload/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [pattern(['**/main/**', '**/renderer/**'], 'The preload imports only shared (and electron).')] }],
    },
  },
  {
    files: ['src/main/**', 'test/**', 'bench/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [pattern(['**/renderer/**'], 'Nothing imports the renderer.')] }],
    },
  },
  {
    files: ['src/main/engines/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          pattern(['**/renderer/**'], 'Nothing imports the renderer.'),
          pattern(['node:sqlite', 'node:http', 'node:https', '**/store/index.ts', '**/store/db.ts', '**/http/**'], 'Engines get data, never a database or HTTP handle.'),
        ],
      }],
    },
  },
  {
    // Code written against the store contract (issue 30) awaits every call: a store function's
    // result may be a promise (PostgreSQL), and one not awaited would run outside its transaction.
    files: ['src/main/conversations/**/*.ts', 'src/main/autoreply/**/*.ts', 'src/main/delivery/**/*.ts', 'src/main/store/**/*.ts', 'src/main/writer-worker.ts', 'bench/scale/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }] }],
    },
  },
  {
    files: ['src/main/engines/**/*.test.ts', 'src/main/engines/**/*.fixture.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);

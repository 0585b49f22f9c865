// ESLint (flat config) with typescript-eslint's type-aware rules: `npm run lint`.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import budgets from './eslint.budgets.cjs';

export default defineConfig(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', '.cache/**', 'test-artifacts/**'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits is an error nobody sees: handle it, or mark it `void` with a reason.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default:` does not excuse a missing case: a new union member must revisit every switch.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false }],
      // `_name` marks a deliberately unused binding (e.g. a field left out of a `...rest` copy, which is
      // faster than `delete`); tsc's noUnusedLocals/noUnusedParameters follow the same convention.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // `async` without `await` is how an interface's Promise-returning method is implemented
      // synchronously (the memory credential store): a throw still becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // `import x = require('m')` is TypeScript's typed CommonJS import (mocha's class in the VS Code suite).
      '@typescript-eslint/no-require-imports': ['error', { allowAsImport: true }],
      // Labels and header values are cleaned of control characters on purpose, with regexes that name them.
      'no-control-regex': 'off',
    },
  },
  {
    // routing/, quota/, the what-if simulator and the simulator's world model are pure functions of their
    // inputs and a clock argument: no wall clock, randomness, timers, environment or console (imports are checked by check:deps).
    files: ['src/routing/**/*.ts', 'src/quota/**/*.ts', 'src/whatif/**/*.ts', 'src/sim/windows.ts', 'src/sim/promptCache.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['process', 'console', 'fetch', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask'].map((name) => ({ name, message: 'pure layer: take it as an argument' })),
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'pure layer: take the clock as an argument' },
        { object: 'performance', property: 'now', message: 'pure layer: take the clock as an argument' },
        { object: 'Math', property: 'random', message: 'pure layer: take seeded randomness as an argument' },
      ],
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'pure layer: take the clock as an argument' }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read JSON answers as `any` and assert on their shape; the assertion is the check.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  // Lines per file and per function, parameters per function: eslint.budgets.cjs.
  ...budgets.budgetConfigs(),
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals() },
  },
  {
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' }, // CommonJS scripts load modules with require()
  },
);

/** The globals of a Node script (the TypeScript files get theirs from @types/node). */
function nodeGlobals() {
  const names = [
    'process',
    'console',
    'Buffer',
    'require',
    'module',
    '__dirname',
    '__filename',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'URL',
    'performance',
  ];
  return Object.fromEntries(names.map((name) => [name, 'readonly']));
}

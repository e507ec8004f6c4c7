'use strict';

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  {
    // bench/results holds data; the experiments are kept exactly as they ran (their README).
    ignores: [
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'packages/bench/experiments/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'commonjs',
      globals: { ...globals.node, ...globals.jest },
    },
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      strict: ['error', 'global'],
    },
  },
  {
    // The webmail page's browser modules (packages/web/public): ES modules, browser globals.
    files: ['packages/web/public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: { ...globals.browser },
    },
    rules: { strict: 'off' },
  },
];

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/architecture.md): lib/ imports nothing of ours outside lib/; core/ only lib/ and core/;
// handlers/ never middleware/; a middleware folder imports no sibling, except the folders whose job is
// composition and the auth family among itself. The patterns read the import's text: climbing out of a folder
// and naming a top-level folder (`../../middleware/…`) or a sibling middleware folder (`../dispatch/…`).
// test/contracts/layers.test.ts checks each rule still reports.
const COMPOSERS = ['auth', 'endpoint', 'sdk', 'proxy'];
const AUTH_FAMILY = ['auth', 'api-key-auth', 'oidc-auth', 'protected-resource-metadata'];
const MIDDLEWARE = readdirSync(join(import.meta.dirname, 'middleware'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);
const outOf = (folders) => `^(\\.\\./)+(${folders.join('|')})(/|$)`;
const ROOT_ENTRY = '^(\\.\\./)+index(\\.js)?$';
const restrict = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});
const siblingsBut = (folder, allowed) =>
  restrict(
    [`middleware/${folder}/**/*.ts`],
    [
      {
        regex: `^\\.\\./(?!(${allowed.join('|')})/)[a-z][a-z0-9-]*/|^(\\.\\./)+middleware/(?!(${allowed.join('|')})/)`,
        message: `middleware/${folder} imports no sibling middleware folder: move what it shares to core/ (docs/architecture.md).`,
      },
    ],
  );
const layers = [
  restrict(
    ['lib/**/*.ts'],
    [
      {
        regex: `${outOf(['core', 'middleware', 'handlers', 'testing', 'bin'])}|${ROOT_ENTRY}`,
        message: 'lib/ is pure: it imports nothing of ours outside lib/ (docs/architecture.md).',
      },
    ],
  ),
  restrict(
    ['core/**/*.ts'],
    [
      {
        regex: `${outOf(['middleware', 'handlers', 'testing', 'bin'])}|${ROOT_ENTRY}`,
        message: 'core/ is the kernel: it imports only lib/ and core/ (docs/architecture.md).',
      },
    ],
  ),
  restrict(
    ['handlers/**/*.ts'],
    [
      {
        regex: outOf(['middleware']),
        message: 'handlers/ never imports middleware/: what both need lives in core/ (docs/architecture.md).',
      },
    ],
  ),
  ...MIDDLEWARE.filter((m) => !COMPOSERS.includes(m)).map((m) =>
    siblingsBut(m, AUTH_FAMILY.includes(m) ? AUTH_FAMILY : [m]),
  ),
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.tmp/**', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-control-regex': 'off',
    },
  },
  {
    // Guardrails for the library's source: small files, functions that fit on a screen, explicit exports.
    files: [
      'index.ts',
      'lib/**/*.ts',
      'core/**/*.ts',
      'middleware/**/*.ts',
      'handlers/**/*.ts',
      'testing/**/*.ts',
      'bin/**/*.ts',
    ],
    rules: {
      'max-lines': ['error', { max: 600 }],
      'max-lines-per-function': ['error', { max: 120 }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ExportAllDeclaration',
          message: 'Export names explicitly: the public surface is listed by name.',
        },
      ],
    },
  },
  ...layers,
  {
    files: ['test/**', 'bench/**', 'examples/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);

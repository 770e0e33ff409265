/**
 * The layers (docs/architecture.md) are enforced by eslint's `no-restricted-imports` (eslint.config.mjs). Each
 * row lints a small in-memory file placed under a folder with one import, through eslint's Node API and the
 * project's own config, and checks that the rule reports it (or, for the allowed imports, that it does not):
 * so the lint rule cannot silently stop working.
 *
 * eslint loads its flat config with a dynamic import(), which jest's module sandbox does not run; the probe
 * therefore runs in a child node process, which lints every row in one go and prints the messages as JSON.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

interface Row {
  /** Where the probe file is placed (it is never written: eslint lints the text under this name). */
  file: string;
  code: string;
  /** A part of the message expected, or `null` when the import is allowed. */
  reported: string | null;
}

const LIB = 'lib/ is pure';
const CORE = 'core/ is the kernel';
const HANDLERS = 'handlers/ never imports middleware/';
const sibling = (m: string): string => `middleware/${m} imports no sibling middleware folder`;

const ROWS: Row[] = [
  // lib/: nothing of ours outside lib/.
  { file: 'lib/probe.ts', code: "import { x } from '../core/options.js';", reported: LIB },
  {
    file: 'lib/redact/probe.ts',
    code: "import { x } from '../../middleware/parse/index.js';",
    reported: LIB,
  },
  { file: 'lib/probe.ts', code: "import type { x } from '../handlers/tools/index.js';", reported: LIB },
  { file: 'lib/probe.ts', code: "import { x } from '../index.js';", reported: LIB },
  { file: 'lib/redact/probe.ts', code: "import { x } from '../errors.js';", reported: null },
  // core/: only lib/ and core/.
  { file: 'core/probe.ts', code: "import { x } from '../middleware/dispatch/index.js';", reported: CORE },
  { file: 'core/probe.ts', code: "export { x } from '../handlers/changes/index.js';", reported: CORE },
  { file: 'core/probe.ts', code: "import { x } from '../testing/index.js';", reported: CORE },
  { file: 'core/probe.ts', code: "import { x } from '../lib/errors.js';", reported: null },
  { file: 'core/probe.ts', code: "import { x } from './options.js';", reported: null },
  // handlers/: never middleware/.
  {
    file: 'handlers/tools/probe.ts',
    code: "import type { x } from '../../middleware/dispatch/index.js';",
    reported: HANDLERS,
  },
  {
    file: 'handlers/probe.ts',
    code: "import { x } from '../middleware/parse/index.js';",
    reported: HANDLERS,
  },
  { file: 'handlers/tools/probe.ts', code: "import { x } from '../../core/options.js';", reported: null },
  { file: 'handlers/tools/probe.ts', code: "import { x } from '../changes/index.js';", reported: null },
  // A middleware folder: no sibling, by either path.
  {
    file: 'middleware/dispatch/probe.ts',
    code: "import { x } from '../tool-filter/index.js';",
    reported: sibling('dispatch'),
  },
  {
    file: 'middleware/limits/probe.ts',
    code: "import { x } from '../../middleware/metrics/index.js';",
    reported: sibling('limits'),
  },
  {
    file: 'middleware/check-headers/probe.ts',
    code: "import type { x } from '../classify-revision/index.js';",
    reported: sibling('check-headers'),
  },
  {
    file: 'middleware/dispatch/probe.ts',
    code: "import { x } from '../../core/tool-views.js';",
    reported: null,
  },
  { file: 'middleware/dispatch/probe.ts', code: "import { x } from './options.js';", reported: null },
  // The auth family among itself, but no other sibling.
  { file: 'middleware/oidc-auth/probe.ts', code: "import { x } from '../auth/chain.js';", reported: null },
  {
    file: 'middleware/protected-resource-metadata/probe.ts',
    code: "import { x } from '../oidc-auth/index.js';",
    reported: null,
  },
  {
    file: 'middleware/api-key-auth/probe.ts',
    code: "import { x } from '../limits/index.js';",
    reported: sibling('api-key-auth'),
  },
  // The composers import any sibling.
  { file: 'middleware/endpoint/probe.ts', code: "import { x } from '../dispatch/index.js';", reported: null },
  { file: 'middleware/auth/probe.ts', code: "import { x } from '../oidc-auth/index.js';", reported: null },
];

/** The `no-restricted-imports` messages of each row, in order, from eslint run on the project's config. */
function lint(rows: readonly Row[]): string[][] {
  const script = `
    const { ESLint } = require('eslint');
    const rows = JSON.parse(process.argv[1]);
    (async () => {
      const eslint = new ESLint({ cwd: process.cwd() });
      const out = [];
      for (const r of rows) {
        const [result] = await eslint.lintText(r.code + '\\nexport { x };\\n', { filePath: r.file });
        out.push(result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message));
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
  `;
  const run = spawnSync(process.execPath, ['-e', script, JSON.stringify(rows)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`eslint probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[][];
}

describe('the layers are enforced by eslint', () => {
  let messages: string[][] = [];
  beforeAll(() => {
    messages = lint(ROWS);
  });

  test.each(ROWS.map((r, i) => [`${r.file}: ${r.code}`, i] as const))('%s', (_name, i) => {
    const row = ROWS[i]!;
    const got = messages[i]!;
    if (row.reported === null) expect(got).toEqual([]);
    else {
      expect(got).toHaveLength(1);
      expect(got[0]).toContain(row.reported);
    }
  });
});

/**
 * The performance rule is checked, not remembered: `npm run docs:check` refuses a source comment about engine
 * internals that points at no row of docs/performance.md's optimization register, and a pointer to an anchor that
 * is no row. Run (`--perf-only`) on a copy of the repository with probe comments added.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const COPIED = [
  'lib',
  'core',
  'middleware',
  'handlers',
  'testing',
  'bin',
  'index.ts',
  'docs/performance.md',
  'scripts/docs-check.mjs',
  'scripts/md-anchors.cjs',
  'scripts/package-surface.cjs',
  'package.json',
];

let dir: string;
let output: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcpware-perf-pointers-'));
  for (const name of COPIED) cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const probe = (file: string, text: string): void =>
    writeFileSync(join(dir, file), readFileSync(join(dir, file), 'utf8') + text);
  probe('lib/clip.ts', '\n// Kept monomorphic for V8.\nexport const probeA = 1;\n');
  probe(
    'core/log.ts',
    '\n/** A fast path. See docs/performance.md#parse-once. */\nexport const probeB = 1;\n',
  );
  probe('lib/clip.ts', '\n// see docs/performance.md#no-such-row\nexport const probeC = 1;\n');
  writeFileSync(
    join(dir, 'lib', 'probe-string.ts'),
    "export const probeD = '/* V8 hidden class */';\nexport const probeE = `// writeHead ${1}`;\n",
  );
  const run = spawnSync(process.execPath, ['scripts/docs-check.mjs', '--perf-only'], {
    cwd: dir,
    encoding: 'utf8',
  });
  output = `${run.stdout}${run.stderr}`;
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const perfLines = (): string[] =>
  output.split('\n').filter((l) => l.includes('engine internals') || l.includes('is not a row'));

it('refuses a comment about engine internals that points at no row', () => {
  expect(perfLines()).toContainEqual(expect.stringMatching(/^lib\/clip\.ts:\d+: .*\(V8\) without a row/));
});

it('accepts one that points at a row', () => {
  expect(perfLines().filter((l) => l.startsWith('core/log.ts'))).toEqual([]);
});

it('refuses a pointer to an anchor that is no row', () => {
  expect(perfLines()).toContainEqual(
    expect.stringMatching(
      /^lib\/clip\.ts:\d+: docs\/performance\.md#no-such-row is not a row of the register/,
    ),
  );
});

it('reads comments only, not strings', () => {
  expect(perfLines().filter((l) => l.startsWith('lib/probe-string.ts'))).toEqual([]);
  // The only problems in lib/clip.ts are the two probes that are comments.
  expect(perfLines().filter((l) => l.startsWith('lib/clip.ts'))).toHaveLength(2);
});

it('the repository itself has no such problem', () => {
  const own = perfLines().filter((l) => !/^lib\/(clip|probe-string)\.ts:/.test(l));
  expect(own).toEqual([]);
});

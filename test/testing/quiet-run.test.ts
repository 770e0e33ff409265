/**
 * `npm test` is quiet by default: the library's "[mcpware] …" stderr lines are silent in jest unless
 * MCP_TEST_LOGS=1 (test/support/quiet-logs.cjs), and the Redis skip line counts the tests jest counts as skipped
 * (test/support/redis-skips-reporter.cjs).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SUPPORT = path.join(__dirname, '..', 'support');

function run(env: Record<string, string>): Promise<string> {
  const script = `
    require(${JSON.stringify(path.join(SUPPORT, 'quiet-logs.cjs'))});
    const { stderrLogger } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'core', 'respond.ts'))});
    stderrLogger.warn('said by the library', { reason: 'x' });
    process.stderr.write('said by jest\\n', () => process.stderr.write('callback ran\\n'));
  `;
  const tsx = path.join(__dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [tsx, '-e', script],
      { env: { ...process.env, MCP_TEST_LOGS: '', ...env } },
      (error, _stdout, stderr) => (error ? reject(error) : resolve(stderr)),
    );
  });
}

describe('quiet-logs.cjs', () => {
  test('drops the library logger lines, nothing else', async () => {
    expect(await run({})).toBe('said by jest\ncallback ran\n');
  });

  test('MCP_TEST_LOGS=1 keeps them', async () => {
    expect(await run({ MCP_TEST_LOGS: '1' })).toBe(
      '[mcpware] said by the library {"reason":"x"}\nsaid by jest\ncallback ran\n',
    );
  });
});

describe('redis-skips-reporter.cjs', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS jest reporter
  const Reporter = require(path.join(SUPPORT, 'redis-skips-reporter.cjs')) as new () => {
    onRunComplete(contexts: unknown, results: unknown): void;
  };

  function report(noted: string[], results: { testFilePath: string; statuses: string[] }[]): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcpware-skips-test-'));
    const saved = { dir: process.env.MCPWARE_REDIS_SKIPS, write: process.stderr.write };
    let out = '';
    try {
      noted.forEach((p, i) => writeFileSync(path.join(dir, String(i)), p));
      process.env.MCPWARE_REDIS_SKIPS = dir;
      process.stderr.write = ((chunk: string) => {
        out += chunk;
        return true;
      }) as typeof process.stderr.write;
      new Reporter().onRunComplete(new Set(), {
        testResults: results.map((r) => ({
          testFilePath: r.testFilePath,
          testResults: r.statuses.map((status) => ({ status })),
        })),
      });
    } finally {
      process.stderr.write = saved.write;
      if (saved.dir === undefined) delete process.env.MCPWARE_REDIS_SKIPS;
      else process.env.MCPWARE_REDIS_SKIPS = saved.dir;
      rmSync(dir, { recursive: true, force: true });
    }
    return out;
  }

  test('counts the skipped tests of the noted files, as jest counts them', () => {
    const out = report(
      ['/t/a.test.ts', '/t/b.test.ts'],
      [
        { testFilePath: '/t/a.test.ts', statuses: ['pending', 'pending', 'pending'] },
        // A file with Redis tests and others: only its skipped ones count.
        { testFilePath: '/t/b.test.ts', statuses: ['passed', 'pending', 'passed'] },
        { testFilePath: '/t/c.test.ts', statuses: ['pending'] },
      ],
    );
    expect(out).toMatch(/^redis-server not found: 4 tests in 2 files skipped; install redis-server/);
  });

  test('says nothing when nothing was skipped', () => {
    expect(report([], [{ testFilePath: '/t/a.test.ts', statuses: ['passed'] }])).toBe('');
  });
});

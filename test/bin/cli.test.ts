import { execFile } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { hashKey, parseApiKeysEnv } from '../../lib/apikeys';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { packageVersion, run } from '../../bin/mcpware';

async function cli(
  args: string[],
  stdin?: string,
  tty = false,
): Promise<{ code: number; out: string; err: string }> {
  const input = Object.assign(new PassThrough(), { isTTY: tty });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  if (stdin !== undefined) input.end(stdin);
  const code = await run(args, { stdin: input, stdout, stderr });
  return { code, out, err };
}

const KEY = 'k3y-0123456789abcdef0123456789';

describe('mcpware hash-key', () => {
  test('hashes the argument', async () => {
    expect(await cli(['hash-key', KEY])).toEqual({ code: 0, out: `${hashKey(KEY)}\n`, err: '' });
  });

  test('reads standard input, dropping one final newline (LF or CRLF)', async () => {
    expect((await cli(['hash-key'], `${KEY}\n`)).out).toBe(`${hashKey(KEY)}\n`);
    expect((await cli(['hash-key'], `${KEY}\r\n`)).out).toBe(`${hashKey(KEY)}\n`);
    expect((await cli(['hash-key'], KEY)).out).toBe(`${hashKey(KEY)}\n`);
  });

  test('reads one line from a terminal', async () => {
    const r = await cli(['hash-key'], `${KEY}\nignored\n`, true);
    expect(r.out).toBe(`${hashKey(KEY)}\n`);
    expect(r.err).toContain('Key');
  });

  test('--user and --groups print an MCP_API_KEYS entry that parses back', async () => {
    const r = await cli(['hash-key', '--user', 'alice', '--groups', 'admins,ops'], KEY);
    expect(r.out).toBe(`alice:${hashKey(KEY)}:admins|ops\n`);
    expect(parseApiKeysEnv(r.out)).toEqual({
      ok: true,
      keys: [{ userId: 'alice', hash: hashKey(KEY), groups: ['admins', 'ops'] }],
    });
  });

  test('warns about a short key', async () => {
    const r = await cli(['hash-key', 'short']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/5-character key is easy to guess/);
  });

  test.each<[string, string[], string | undefined, RegExp]>([
    ['an empty key', ['hash-key'], '\n', /the key is empty/],
    ['a key with a space', ['hash-key', 'a b'], undefined, /cannot carry/],
    ['a non-ASCII key', ['hash-key'], 'clé-0123456789abcdef', /cannot carry/],
    ['two keys', ['hash-key', 'a', 'b'], undefined, /one key at a time/],
    ['an unknown option', ['hash-key', '--salt', 'x'], undefined, /unknown option --salt/],
    [
      'a misspelt option',
      ['hash-key', KEY, '--usr', 'a'],
      undefined,
      /unknown option --usr; did you mean --user\?/,
    ],
    ['--groups without --user', ['hash-key', KEY, '--groups', 'a'], undefined, /--groups needs --user/],
    ['a user with a colon', ['hash-key', KEY, '--user', 'a:b'], undefined, /--user/],
    ['--user without a value', ['hash-key', KEY, '--user'], undefined, /needs a value/],
    ['an unknown command', ['hash'], undefined, /unknown command "hash"/],
  ])('refuses %s with exit code 2', async (_n, args, stdin, msg) => {
    const r = await cli(args, stdin);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(msg);
  });

  test('help', async () => {
    expect((await cli(['--help'])).out).toMatch(/Usage:\n {2}mcpware new-key/);
    expect((await cli([])).code).toBe(2);
  });

  test('--help lists every command', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['new-key', 'hash-key', '--version']) expect(r.out).toContain(`mcpware ${c}`);
  });

  test('a misspelt command names the closest one', async () => {
    expect((await cli(['newkey'])).err).toMatch(/unknown command "newkey"; did you mean new-key\?/);
    expect((await cli(['--verison'])).err).toMatch(/did you mean --version\?/);
  });

  test('runs as a command (shebang file through tsx), key on standard input', async () => {
    const root = path.join(__dirname, '..', '..');
    const out = await new Promise<string>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [
          path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'),
          path.join(root, 'bin', 'mcpware.ts'),
          'hash-key',
        ],
        { cwd: root },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      );
      child.stdin!.end(KEY);
    });
    expect(out).toBe(`${hashKey(KEY)}\n`);
  });
});

describe('mcpware --version', () => {
  const version = (
    JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

  test.each([['--version'], ['-v'], ['version']])('%s prints the package version', async (flag) => {
    expect(await cli([flag])).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });

  test('is found from the installed layout (dist/cjs/bin, under its own type-only package.json)', () => {
    const pkg = mkdtempSync(path.join(tmpdir(), 'mcpware-cli-'));
    const bin = path.join(pkg, 'node_modules', 'mcpware', 'dist', 'cjs', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'my-app', version: '1.0.0' }));
    writeFileSync(
      path.join(bin, '..', '..', '..', 'package.json'),
      JSON.stringify({ name: 'mcpware', version: '9.8.7' }),
    );
    writeFileSync(path.join(bin, '..', 'package.json'), JSON.stringify({ type: 'commonjs' }));
    try {
      expect(packageVersion(bin)).toBe('9.8.7');
      expect(packageVersion(pkg)).toBeUndefined();
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});

describe('mcpware new-key', () => {
  test('prints a random key and its hash; the key can travel in a Bearer header', async () => {
    const r = await cli(['new-key']);
    expect(r.code).toBe(0);
    const m = /^key: {2}([A-Za-z0-9_-]{43})\nhash: (sha256:[0-9a-f]{64})\n$/.exec(r.out);
    expect(m).not.toBeNull();
    expect(m![2]).toBe(hashKey(m![1]!));
    expect((await cli(['hash-key', m![1]!])).out).toBe(`${m![2]}\n`);
    expect(r.err).toMatch(/keep only the hash/);
    const again = await cli(['new-key']);
    expect(again.out).not.toBe(r.out);
  });

  test('--user and --groups add the MCP_API_KEYS entry, which parses back', async () => {
    const r = await cli(['new-key', '--user', 'alice', '--groups', 'admins,ops']);
    const key = /^key: {2}(\S+)$/m.exec(r.out)![1]!;
    const line = /^MCP_API_KEYS entry: (\S+)$/m.exec(r.out)![1]!;
    expect(line).toBe(`alice:${hashKey(key)}:admins|ops`);
    expect(parseApiKeysEnv(line)).toEqual({
      ok: true,
      keys: [{ userId: 'alice', hash: hashKey(key), groups: ['admins', 'ops'] }],
    });
  });

  test.each<[string, string[], RegExp]>([
    ['a key argument', ['new-key', 'mine'], /takes no key.*mcpware hash-key/],
    ['a misspelt option', ['new-key', '--usr', 'a'], /unknown option --usr; did you mean --user\?/],
    ['--groups without --user', ['new-key', '--groups', 'a'], /--groups needs --user/],
  ])('refuses %s with exit code 2', async (_n, args, msg) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(msg);
  });
});

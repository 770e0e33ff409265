/**
 * The README's Quick start runs as written: its code block, taken from README.md as it stands, is started with
 * tsx (`mcpware` mapped to the source, as the installed package maps it to dist), and the official SDK client
 * lists and calls its tool through both names the block answers to, localhost and 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../support/ports';

const ROOT = path.resolve(__dirname, '../..');

/** The first fenced ts block under the README's "## Quick start" heading. */
function quickStartBlock(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start\n');
  if (start < 0) throw new Error('README.md has no "## Quick start" heading');
  const section = readme.slice(start + 1).split(/\n## /)[0]!;
  const block = /```ts\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error('the Quick start has no ts block');
  return block[1]!;
}

/** `mcpware` and `mcpware/*` → the source behind each export, the way docs-check maps them. */
function pathsFromExports(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    const built = target.import?.default;
    if (!built) continue;
    const source = built.replace(/^\.\/dist\/esm\//, './').replace(/\.js$/, '.ts');
    paths[key === '.' ? 'mcpware' : `mcpware/${key.slice(2)}`] = [path.join(ROOT, source)];
  }
  return paths;
}

let dir: string;
let child: ChildProcess | undefined;
let port: number;
let output = '';
const block = quickStartBlock();

beforeAll(async () => {
  // Inside the repository, so that `express`, `winston` and `prom-client` resolve from its node_modules.
  mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  dir = mkdtempSync(path.join(ROOT, '.tmp', 'quick-start-'));
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'nodenext', strict: true, paths: pathsFromExports() } }),
  );
  writeFileSync(path.join(dir, 'server.ts'), block);
  port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    TSX_TSCONFIG_PATH: path.join(dir, 'tsconfig.json'),
  };
  delete env.MCP_API_KEY; // the block's documented development default
  child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  await new Promise<void>((resolve, reject) => {
    let done = false;
    child!.once('exit', (code) => {
      if (!done) reject(new Error(`the Quick start exited (${code}): ${output}`));
      done = true;
    });
    const poll = () => {
      if (done) return;
      const req = http.get({ host: '127.0.0.1', port, path: '/mcp', agent: false }, (res) => {
        res.resume();
        done = true;
        resolve();
      });
      req.on('error', () => setTimeout(poll, 100));
    };
    poll();
  });
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('README Quick start, run verbatim', () => {
  test('documents its development key in the block', () => {
    expect(block).toMatch(/process\.env\.MCP_API_KEY \?\? '[^']+'/);
  });

  test.each(['localhost', '127.0.0.1'])(
    'the official SDK client lists and calls its tool on %s',
    async (host) => {
      const key = /process\.env\.MCP_API_KEY \?\? '([^']+)'/.exec(block)![1]!;
      const client = new Client({ name: 'quick-start', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://${host}:${port}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      try {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toEqual(['hello']);
        const hello = (await client.callTool({ name: 'hello', arguments: { who: 'Ada' } })) as {
          structuredContent: unknown;
        };
        expect(hello.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
      } finally {
        await client.close();
      }
    },
  );

  test('a GET of the endpoint gets the JSON-RPC 405, not an HTML 404', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/mcp`);
    expect(r.status).toBe(405);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

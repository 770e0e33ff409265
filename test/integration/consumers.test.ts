/**
 * The package as users install it: `npm pack`, install the tarball into a fresh project, then import it from
 * ESM, CommonJS and TypeScript and serve one MCP request through the installed copy.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });

let dir: string;

beforeAll(() => {
  // Always built from this checkout: a dist/ left by an earlier build would test code the tree no longer has.
  run('npm', ['run', 'build'], root);
  dir = mkdtempSync(path.join(tmpdir(), 'mcpware-consumer-'));
  run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], root);
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error('npm pack produced no tarball');
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, version: '1.0.0' }),
  );
  run('npm', ['install', '--prefer-offline', '--no-save', path.join(dir, tgz)], dir);
}, 240_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// One request through the installed package on bare node:http; prints the answer.
const serveOnce = (imports: string) => `${imports}
const server = http.createServer(compose([parse(), rejectBatch(), classifyRevision(), checkHeaders(), dispatch({ anonymous: true,  handlers: {}, serverInfo: { name: 'consumer', version: '1.0.0' } })]));
server.listen(0, '127.0.0.1', async () => {
  const { port } = server.address();
  const res = await fetch('http://127.0.0.1:' + port + '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });
  console.log(JSON.stringify({ status: res.status, body: await res.json(), lib: typeof foldMethod, sub: typeof subParse }));
  server.close();
});
`;

const check = (out: string) => {
  const r = JSON.parse(out.trim().split('\n').pop()!);
  expect(r.status).toBe(200);
  expect(r.body.result.resultType).toBe('complete');
  expect(r.body.result.supportedVersions).toContain('2026-07-28');
  expect(r.lib).toBe('function');
  expect(r.sub).toBe('function');
};

test('ESM consumers import the root, subpaths and mcpware/lib', () => {
  writeFileSync(
    path.join(dir, 'esm.mjs'),
    serveOnce(`import http from 'node:http';
import { compose, parse, rejectBatch, classifyRevision, checkHeaders, dispatch } from 'mcpware';
import { parse as subParse } from 'mcpware/parse';
import { foldMethod } from 'mcpware/lib';
import { otel } from 'mcpware/otel';
if (typeof otel !== 'function') throw new Error('otel');`),
  );
  check(run('node', ['esm.mjs'], dir));
});

test('CommonJS consumers require the root, subpaths and mcpware/lib (jose included, via require(esm))', () => {
  writeFileSync(
    path.join(dir, 'cjs.cjs'),
    serveOnce(`const http = require('node:http');
const { compose, parse, rejectBatch, classifyRevision, checkHeaders, dispatch, oidcAuth } = require('mcpware');
const { parse: subParse } = require('mcpware/parse');
const { foldMethod } = require('mcpware/lib');
if (typeof oidcAuth !== 'function' || typeof require('mcpware/oidc-auth').oidcAuth !== 'function') throw new Error('oidc');
if (typeof require('mcpware/otel').otel !== 'function') throw new Error('otel');`),
  );
  check(run('node', ['cjs.cjs'], dir));
});

test('TypeScript consumers type-check against the shipped declarations (node16 and bundler resolution)', () => {
  writeFileSync(
    path.join(dir, 'consumer.ts'),
    `import http from 'node:http';
import { compose, parse, dispatch, ToolRegistry, ok, type McpRequest, type CallContext } from 'mcpware';
import { checkHeaders } from 'mcpware/check-headers';
import { foldMethod, ErrorCode } from 'mcpware/lib';
const registry = new ToolRegistry();
registry.register({
  name: 'hello',
  inputSchema: { type: 'object', properties: { who: { type: 'string' } } },
  call: (args, _ctx: CallContext) => ok({ greeting: 'Hello, ' + String(args.who) }),
});
const folded: string = foldMethod('tools/list');
const code: number = ErrorCode.HeaderMismatch;
const handler = compose([parse(), checkHeaders({ paramHeaders: registry.paramHeaders }), dispatch({ anonymous: true,  handlers: { tools: registry }, serverInfo: { name: 'c', version: '1' } })]);
http.createServer((req, res) => {
  const mcp: McpRequest | undefined = req.locals?.mcp;
  void mcp;
  handler(req, res);
});
void folded; void code;
`,
  );
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const common = [
    '--noEmit',
    '--strict',
    '--skipLibCheck',
    'false',
    '--types',
    'node',
    '--typeRoots',
    path.join(root, 'node_modules/@types'),
    'consumer.ts',
  ];
  run(
    'node',
    [tsc, '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', ...common],
    dir,
  );
  run(
    'node',
    [tsc, '--module', 'esnext', '--moduleResolution', 'bundler', '--target', 'es2022', ...common],
    dir,
  );
});

// supertest is an optional peer: the consumer installed the tarball without it.
test('mcpware/testing loads without supertest: TestIssuer works, McpTestClient says what to install', () => {
  const script = (load: string) => `${load}
(async () => {
  let resolvable = true;
  try { require.resolve('supertest'); } catch { resolvable = false; }
  const idp = await TestIssuer.start();
  const token = await idp.sign({ sub: 'alice' });
  await idp.stop();
  let message = '';
  try { await new McpTestClient('http://127.0.0.1:9').ping(); } catch (e) { message = e.message; }
  console.log(JSON.stringify({ resolvable, token: token.split('.').length, message }));
})();
`;
  writeFileSync(
    path.join(dir, 'testing.cjs'),
    script(`const { TestIssuer, McpTestClient } = require('mcpware/testing');`),
  );
  writeFileSync(
    path.join(dir, 'testing.mjs'),
    script(`import { createRequire } from 'node:module';
import { TestIssuer, McpTestClient } from 'mcpware/testing';
const require = createRequire(import.meta.url);`),
  );
  for (const file of ['testing.cjs', 'testing.mjs']) {
    const r = JSON.parse(run('node', [file], dir).trim().split('\n').pop()!);
    expect(r).toEqual({ resolvable: false, token: 3, message: expect.stringMatching(/supertest/) });
    expect(r.message).toMatch(/npm install --save-dev supertest/);
  }
});

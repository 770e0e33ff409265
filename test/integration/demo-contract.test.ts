/**
 * The demo server's contract (README "Demo server"): environment, tools, resources, prompts, metrics, audit,
 * limits, origin protection, OIDC and Redis, checked through HTTP with mcpware's own test client, in each of
 * the demo's three modes (docs/guides/demo-server.md#modes): mcpware's dispatcher (`dispatch`), the official
 * SDK v2 in-process behind the stack (`sdk`), and a plain SDK server in another process behind the stack's
 * proxy (`upstream`). Where a mode answers differently, the test says so with the reason.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import { TASKS_EXTENSION } from '../../lib/tasks';
import { McpTestClient, TestIssuer } from '../../testing/index';
import { redisDescribe, startRedis, type RedisServer } from '../support/redis';
import { startDemo, type RunningDemo } from '../support/demo';
import { type Stream, envelope, modernHeaders, openStream } from '../support/streaming';
import { spawnUpstream, type UpstreamProcess } from '../support/demo-upstream';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users,root:${sha('root-token')}:admin|users`;
const AUTH = { Authorization: 'Bearer demo-token' };
const ADMIN = { Authorization: 'Bearer root-token' };

type Mode = 'dispatch' | 'sdk' | 'upstream';
const MODES: Mode[] = ['dispatch', 'sdk', 'upstream'];
/** The SDK modes' tools are the official SDK's: where it answers otherwise, the contract says so. */
const isSdk = (mode: Mode) => mode !== 'dispatch';

let upstream: UpstreamProcess | undefined;
beforeAll(async () => {
  upstream = await spawnUpstream();
}, 40_000);
afterAll(() => upstream?.stop());

/** The environment of a mode. */
function modeEnv(mode: Mode): Record<string, string> {
  if (mode === 'sdk') return { MCP_BACKEND: 'sdk' };
  if (mode === 'upstream') return { MCP_UPSTREAM_URL: upstream!.url };
  return {};
}

/** A subscriptions/listen stream on `url` subscribed to notes://today, past its acknowledgement. */
async function listenToNotes(url: string): Promise<Stream> {
  const message = {
    jsonrpc: '2.0',
    id: 'notes',
    method: 'subscriptions/listen',
    params: { notifications: { resourceSubscriptions: ['notes://today'] }, _meta: envelope() },
  };
  const st = await openStream(url, message, { ...modernHeaders('subscriptions/listen'), ...AUTH });
  expect(st.status).toBe(200);
  expect(await st.next()).toMatchObject({
    method: 'notifications/subscriptions/acknowledged',
    params: { notifications: { resourceSubscriptions: ['notes://today'] } },
  });
  return st;
}

describe('npm start', () => {
  test('prints the URL when ready and answers /healthz', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const root = path.resolve(__dirname, '../..');
    const child = spawn(
      process.execPath,
      [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'examples/server.ts'],
      {
        cwd: root,
        env: { ...process.env, PORT: String(port), MCP_AUDIT_LOG: '/dev/null' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error('no ready line: ' + out)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) {
            clearTimeout(timer);
            resolve(out.split('\n')[0]!);
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      expect(line).toContain(`http://127.0.0.1:${port}/mcp`);
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  }, 40_000);
});

describe.each(MODES)('the demo in both eras (%s)', (mode) => {
  let d: RunningDemo;
  beforeAll(async () => {
    d = await startDemo({ MCP_API_KEYS: KEYS, ...modeEnv(mode) });
  });
  afterAll(() => d.stop());

  describe.each(['modern', 'legacy'] as const)('%s', (era) => {
    const client = (headers = AUTH) => new McpTestClient(d.url, { era, headers, autoParamHeaders: true });

    test('hello: structuredContent plus the same JSON as text, with an outputSchema', async () => {
      const c = client();
      const list = await c.listTools();
      const hello = list.body.result.tools.find((t: { name: string }) => t.name === 'hello');
      expect(hello.outputSchema).toBeDefined();
      const r = await c.callTool('hello', { who: 'Ada' });
      expect(r.status).toBe(200);
      expect(r.body.result.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
      expect(JSON.parse(r.body.result.content[0].text)).toEqual({ greeting: 'Hello, Ada!' });
      if (era === 'modern') expect(r.body.result.resultType).toBe('complete');
      else expect(r.body.result.resultType).toBeUndefined();
    });

    test('customer: personal data masked on the way out', async () => {
      const r = await client().callTool('customer', { id: 'c-9' });
      const text = JSON.stringify(r.body.result);
      expect(text).not.toContain('4111 1111 1111 1111');
      expect(text).not.toContain('203.0.113.42');
      expect(text).not.toContain('sam.carter@');
      expect(r.body.result.structuredContent).toMatchObject({
        card: '[masked:card]',
        email: 's***@acme.com',
      });
    });

    test('admin_report: invisible and uncallable for users, exactly like an unknown tool', async () => {
      const c = client();
      const names = (await c.listTools()).body.result.tools.map((t: { name: string }) => t.name);
      expect(names).not.toContain('admin_report');
      const hidden = await c.callTool('admin_report', {});
      const unknown = await c.callTool('no_such_tool', {});
      expect(hidden.status).toBe(unknown.status);
      expect(hidden.body.error.code).toBe(-32602);
      expect(unknown.body.error.code).toBe(-32602);
      expect(hidden.body.error.data.available).toEqual(unknown.body.error.data.available);
      expect(JSON.stringify(hidden.body)).not.toContain('admin_report"]');
      const admin = client(ADMIN);
      expect((await admin.listTools()).body.result.tools.map((t: { name: string }) => t.name)).toContain(
        'admin_report',
      );
      const ok = await admin.callTool('admin_report', {});
      // The upstream never learns who calls: the caller's credentials are not forwarded (the spec forbids
      // token passthrough), so the upstream's report names nobody. In-process, sdk() hands the SDK the principal.
      expect(ok.body.result.structuredContent).toMatchObject({
        requestedBy: mode === 'upstream' ? null : 'root',
      });
    });

    test('region_status mirrors region into Mcp-Param-Region', async () => {
      const c = client();
      const r = await c.callTool('region_status', { region: 'eu-west1' });
      expect(r.body.result.structuredContent).toEqual({ region: 'eu-west1', status: 'ok' });
      if (era === 'modern') {
        const bad = await c.callTool('region_status', { region: 'eu-west1' }, { paramHeaders: {} });
        expect(bad.status).toBe(400);
        expect(bad.body.error.code).toBe(-32020);
        const wrong = await c.callTool(
          'region_status',
          { region: 'eu-west1' },
          { paramHeaders: { 'Mcp-Param-Region': 'us-east1' } },
        );
        expect(wrong.body.error.code).toBe(-32020);
      }
    });

    test('crash: a generic -32603, no message, no stack', async () => {
      const r = await client().callTool('crash', {});
      if (isSdk(mode)) {
        // The SDK answers every exception a tool throws as an isError result carrying its message; the SDK
        // tool logs its failure and answers a generic text instead: a tool error, not -32603.
        expect(r.body.result).toMatchObject({
          isError: true,
          content: [{ type: 'text', text: 'Internal error' }],
        });
      } else expect(r.body.error.code).toBe(-32603);
      expect(JSON.stringify(r.body)).not.toMatch(/hunter2|password|at .*\.ts/);
    });

    test('slow: waits and reports', async () => {
      const r = await client().callTool('slow', { ms: 20 });
      expect(r.body.result.structuredContent).toEqual({ slept: 20 });
      const bad = await client().callTool('slow', { ms: 20000 });
      expect(bad.body.result.isError).toBe(true);
    });

    test('report: answers after its seconds, structured and as text (not in the sdk and upstream modes)', async () => {
      const c = client();
      const names = (await c.listTools()).body.result.tools.map((t: { name: string }) => t.name);
      if (isSdk(mode)) {
        // The tasks extension is dispatch()'s: the SDK servers have no report tool, and the filter lists none.
        expect(names).not.toContain('report');
        return;
      }
      expect(names).toContain('report');
      const r = await c.callTool('report', { seconds: 1 });
      expect(r.body.result.structuredContent).toEqual({ report: 'done in 1 s' });
      expect(JSON.parse(r.body.result.content[0].text)).toEqual({ report: 'done in 1 s' });
      const bad = await c.callTool('report', { seconds: 61 });
      expect(bad.body.result.isError).toBe(true);
    });

    test('resources: two text resources and one binary in docs://; prompts with a required argument', async () => {
      const c = client();
      const list = (await c.listResources()).body.result.resources;
      const text = list.filter((r: { mimeType?: string }) => r.mimeType === 'text/markdown');
      expect(text.length).toBeGreaterThanOrEqual(2);
      expect(list.some((r: { uri: string }) => r.uri === 'docs://logo.png')).toBe(true);
      const png = await c.readResource('docs://logo.png');
      expect(png.body.result.contents[0].blob).toBeDefined();
      const missing = await c.readResource('docs://nope.md');
      // The SDK answers -32602 in both eras (the 2026-07-28 rule); mcpware keeps -32002 for 2025-11-25 clients.
      expect(missing.body.error.code).toBe(era === 'modern' || isSdk(mode) ? -32602 : -32002);
      const prompt = await c.getPrompt('summarize', { topic: 'caching' });
      expect(JSON.stringify(prompt.body.result.messages)).toContain('caching');
      const noArg = await c.getPrompt('summarize', {});
      expect(noArg.body.error.code).toBe(-32602);
    });

    test('without credentials → 401 with a Bearer challenge', async () => {
      const anon = new McpTestClient(d.url, { era });
      const r = era === 'modern' ? await anon.listTools() : await anon.initialize();
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
    });
  });

  test('notes://today and note: a note is appended and announced to the listen streams subscribed to it', async () => {
    const c = new McpTestClient(d.url, { headers: AUTH });
    const listed = (await c.listResources()).body.result.resources;
    expect(listed).toContainEqual(expect.objectContaining({ uri: 'notes://today', mimeType: 'text/plain' }));
    const st = await listenToNotes(d.url);
    try {
      const r = await c.callTool('note', { text: 'first\nline' });
      expect(r.body.result.structuredContent).toEqual({ noted: 'first line' });
      expect(await st.next()).toEqual({
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'notes://today', _meta: { 'io.modelcontextprotocol/subscriptionId': 'notes' } },
      });
      await c.callTool('note', { text: 'second' });
      expect((await st.next()).params).toMatchObject({ uri: 'notes://today' });
      const read = await c.readResource('notes://today');
      expect(read.body.result.contents).toEqual([
        { uri: 'notes://today', mimeType: 'text/plain', text: 'first line\nsecond\n' },
      ]);
      expect((await c.callTool('note', { text: '' })).body.result.isError).toBe(true);
      expect(st.text().split('notifications/resources/updated')).toHaveLength(3);
    } finally {
      st.close();
    }
  });

  test('spec §8.A 27 and 29: a notification → 202 with an empty body; Mcp-Session-Id and Last-Event-ID ignored', async () => {
    const c = new McpTestClient(d.url, { headers: AUTH });
    const note = await c.notify('notifications/initialized');
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    const r = await c.listTools({}, { headers: { 'Mcp-Session-Id': 'abc', 'Last-Event-ID': '5' } });
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toBeUndefined();
    // The SDK does not name the revision in a response header; the proxy passes on what the server sends.
    expect(r.headers['mcp-protocol-version']).toBe(isSdk(mode) ? undefined : '2026-07-28');
    expect(r.body.result.resultType).toBe('complete');
    expect(r.body.result.ttlMs).toBe(0);
    expect(r.body.result.cacheScope).toBe('private');
    expect(r.body.result._meta['io.modelcontextprotocol/serverInfo']).toEqual({
      name: 'mcpware-demo',
      version: '0.1.0',
    });
  });

  test('report as a task: a client declaring the tasks extension polls it to completed, or cancels it', async () => {
    const c = new McpTestClient(d.url, {
      headers: AUTH,
      clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
    const advertised = (await c.discover()).body.result.capabilities.extensions ?? {};
    if (isSdk(mode)) {
      // The SDK servers behind sdk() and proxy() do not speak the extension: nothing advertised, no report.
      expect(advertised[TASKS_EXTENSION]).toBeUndefined();
      return;
    }
    expect(advertised[TASKS_EXTENSION]).toEqual({});
    const tasks = (method: string, taskId: string) =>
      c.request(method, { taskId }, { headers: { 'Mcp-Name': taskId } });
    const until = async (taskId: string) => {
      for (let i = 0; i < 150; i++) {
        const got = (await tasks('tasks/get', taskId)).body.result;
        if (!['working', 'input_required'].includes(got.status)) return got;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`task ${taskId} did not end`);
    };
    const created = (await c.callTool('report', { seconds: 1 })).body.result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(await until(created.taskId)).toMatchObject({
      status: 'completed',
      result: { structuredContent: { report: 'done in 1 s' } },
    });
    const long = (await c.callTool('report', { seconds: 60 })).body.result;
    expect((await tasks('tasks/get', long.taskId)).body.result.status).toBe('working');
    const ack = (await tasks('tasks/cancel', long.taskId)).body.result;
    expect(ack.resultType).toBe('complete');
    expect(ack.taskId ?? ack.status).toBeUndefined();
    expect((await until(long.taskId)).status).toBe('cancelled');
  });

  test('Origin not allowed by default → 403; GET → 405; /metrics after traffic', async () => {
    const base = d.url.replace(/\/mcp$/, '');
    const evil = await new McpTestClient(d.url, {
      headers: { ...AUTH, Origin: 'http://evil.example.com' },
    }).listTools();
    expect(evil.status).toBe(403);
    const get = await request(base).get('/mcp').set(AUTH);
    expect(get.status).toBe(405);
    const m = await request(base).get('/metrics');
    expect(m.status).toBe(200);
    expect(m.text).toMatch(/mcp_requests_total\{era="modern"\} [1-9]/);
    expect(m.text).toMatch(/mcp_tool_calls_total\{tool="hello",outcome="ok"\} [1-9]/);
    // The crash tool's calls (one per era) count under its own name; names nobody registered stay `other`.
    // (In the SDK modes crash is a tool error: see its test.)
    const crashOutcome = isSdk(mode) ? 'tool_error' : 'error';
    expect(m.text).toMatch(
      new RegExp(`mcp_tool_calls_total\\{tool="crash",outcome="${crashOutcome}"\\} [1-9]`),
    );
    expect(m.text).toMatch(/mcp_transport_refusals_total\{reason="origin_not_allowed"\} [1-9]/);
  });

  test('the audit log holds one JSON line per call, refusals included, never the answer', async () => {
    await new Promise((r) => setTimeout(r, 200));
    const lines = readFileSync(d.auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.some((l) => l.decision === 'refused' && l.status === 401)).toBe(true);
    expect(lines.some((l) => l.method === 'tools/call' && l.target === 'hello' && l.outcome === 'ok')).toBe(
      true,
    );
    expect(JSON.stringify(lines)).not.toContain('Hello, Ada!');
  });
});

describe.each(MODES)('demo environment (%s)', (mode) => {
  test('MCP_RPM limits per user with 429 and Retry-After', async () => {
    const d = await startDemo({ MCP_RPM: '3', ...modeEnv(mode) });
    try {
      const c = new McpTestClient(d.url, { headers: AUTH, autoParamHeaders: false });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await c.callTool('hello', { who: 'x' })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const r = await c.callTool('hello', { who: 'x' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(r.body.error.data.limit).toBe('rpm');
    } finally {
      await d.stop();
    }
  });

  test('MCP_REDACT=off leaves the record as it is', async () => {
    const d = await startDemo({ MCP_REDACT: 'off', ...modeEnv(mode) });
    try {
      const r = await new McpTestClient(d.url, { headers: AUTH }).callTool('customer', { id: 'c' });
      expect(r.body.result.structuredContent.card).toBe('4111 1111 1111 1111');
    } finally {
      await d.stop();
    }
  });

  test('MCP_ALLOWED_ORIGINS admits the listed origin', async () => {
    const d = await startDemo({ MCP_ALLOWED_ORIGINS: 'http://app.example.com', ...modeEnv(mode) });
    try {
      const ok = await new McpTestClient(d.url, {
        headers: { ...AUTH, Origin: 'http://app.example.com' },
      }).listTools();
      expect(ok.status).toBe(200);
    } finally {
      await d.stop();
    }
  });

  test('MCP_API_KEYS: a key without groups starts and is served, seeing only the tools that need no group', async () => {
    const d = await startDemo({
      MCP_API_KEYS: `${KEYS},guest:${sha('guest-token')}`,
      ...modeEnv(mode),
    });
    try {
      const c = new McpTestClient(d.url, { headers: { Authorization: 'Bearer guest-token' } });
      const list = await c.listTools();
      expect(list.status).toBe(200);
      const names = list.body.result.tools.map((t: { name: string }) => t.name);
      expect(names).toContain('hello');
      expect(names).not.toContain('admin_report');
      const r = await c.callTool('hello', { who: 'Guest' });
      expect(r.body.result.structuredContent).toEqual({ greeting: 'Hello, Guest!' });
      expect((await c.callTool('admin_report', {})).body.error?.code).toBe(-32602);
    } finally {
      await d.stop();
    }
  });

  test('MCP_PAGE_SIZE pages the lists the caller sees, after visibility, with cursors of their own', async () => {
    const d = await startDemo({ MCP_API_KEYS: KEYS, MCP_PAGE_SIZE: '2', ...modeEnv(mode) });
    try {
      const pages = async (headers: Record<string, string>, list: 'listTools' | 'listPrompts') => {
        const c = new McpTestClient(d.url, { headers });
        const names: string[][] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 10; i++) {
          const r = (await c[list](cursor === undefined ? {} : { cursor })).body.result;
          names.push((r.tools ?? r.prompts).map((t: { name: string }) => t.name));
          cursor = r.nextCursor;
          if (cursor === undefined) break;
        }
        return names;
      };
      const users = await pages(AUTH, 'listTools');
      expect(users.every((p) => p.length <= 2)).toBe(true);
      expect(users.flat()).toEqual(expect.arrayContaining(['hello', 'customer', 'slow', 'crash', 'note']));
      expect(users.flat()).not.toContain('admin_report');
      expect((await pages(ADMIN, 'listTools')).flat()).toContain('admin_report');
      expect(await pages(AUTH, 'listPrompts')).toEqual([['explain-error', 'summarize']]);
      const bad = await new McpTestClient(d.url, { headers: AUTH }).listTools({ cursor: 'not-a-cursor' });
      expect(bad.body.error.code).toBe(-32602);
    } finally {
      await d.stop();
    }
  });
});

describe('demo environment', () => {
  test('bad environment values fail at start-up', async () => {
    await expect(startDemo({ MCP_RPM: 'lots' })).rejects.toThrow(/MCP_RPM/);
    await expect(startDemo({ MCP_API_KEYS: 'demo:nothex' })).rejects.toThrow(/MCP_API_KEYS/);
    await expect(startDemo({ MCP_BACKEND: 'sdK' })).rejects.toThrow(
      /MCP_BACKEND must be "dispatch" or "sdk"/,
    );
    await expect(
      startDemo({ MCP_BACKEND: 'sdk', MCP_UPSTREAM_URL: 'http://127.0.0.1:1/mcp' }),
    ).rejects.toThrow(/exclusive/);
    await expect(startDemo({ MCP_UPSTREAM_URL: 'ftp://127.0.0.1/mcp' })).rejects.toThrow(/proxy/);
    await expect(startDemo({ MCP_TASK_LEASE_MS: 'soon' })).rejects.toThrow(/MCP_TASK_LEASE_MS/);
    await expect(startDemo({ MCP_TASK_LEASE_MS: '0' })).rejects.toThrow(/leaseMs/);
  });

  test('OIDC_ISSUER: tokens from that issuer are accepted besides API keys, and the metadata is served', async () => {
    const issuer = await TestIssuer.start();
    const d = await startDemo({
      OIDC_ISSUER: issuer.url,
      OIDC_AUDIENCE: 'mcp-demo',
      OIDC_REQUIRED_ROLES: 'mcp-user',
    });
    try {
      await d.demo.ready;
      const token = await issuer.sign({ sub: 'alice', aud: 'mcp-demo', roles: ['mcp-user'] });
      const ok = await new McpTestClient(d.url, {
        headers: { Authorization: `Bearer ${token}` },
      }).listTools();
      expect(ok.status).toBe(200);
      const noRole = await issuer.sign({ sub: 'bob', aud: 'mcp-demo', roles: [] });
      const forbidden = await new McpTestClient(d.url, {
        headers: { Authorization: `Bearer ${noRole}` },
      }).listTools();
      expect(forbidden.status).toBe(403);
      expect(forbidden.headers['www-authenticate']).toMatch(/insufficient_scope/);
      expect((await new McpTestClient(d.url, { headers: AUTH }).listTools()).status).toBe(200);
      const none = await new McpTestClient(d.url).listTools();
      expect(none.headers['www-authenticate']).toMatch(
        /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
      const base = d.url.replace(/\/mcp$/, '');
      const prm = await request(base).get('/.well-known/oauth-protected-resource/mcp');
      expect(prm.status).toBe(200);
      expect(prm.body.authorization_servers).toEqual([issuer.url]);
    } finally {
      await d.stop();
      await issuer.stop();
    }
  });

  redisDescribe()('REDIS_URL', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.stop());

    test('two demo instances share one limit through Redis', async () => {
      // A user of this test's own: on a shared Redis (REDIS_URL) no other run's minute window counts.
      const user = `redis-${randomBytes(6).toString('hex')}`;
      redis.ownKeys(`mcpware:limits*${user}*`);
      const env = {
        REDIS_URL: redis.url,
        MCP_RPM: '4',
        MCP_API_KEYS: `${user}:sha256:${sha('demo-token')}:users`,
      };
      const a = await startDemo(env);
      const b = await startDemo(env);
      try {
        const ca = new McpTestClient(a.url, { headers: AUTH, autoParamHeaders: false });
        const cb = new McpTestClient(b.url, { headers: AUTH, autoParamHeaders: false });
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) {
          statuses.push((await ca.callTool('hello', { who: 'a' })).status);
          statuses.push((await cb.callTool('hello', { who: 'b' })).status);
        }
        expect(statuses.filter((s) => s === 200)).toHaveLength(4);
        expect(statuses.filter((s) => s === 429)).toHaveLength(2);
      } finally {
        await a.stop();
        await b.stop();
      }
    });

    test('two demo instances share the notes: a note on A is read on B and announced to its listen streams', async () => {
      const a = await startDemo({ REDIS_URL: redis.url });
      const b = await startDemo({ REDIS_URL: redis.url });
      let st: Stream | undefined;
      try {
        st = await listenToNotes(b.url);
        // Both instances' subscriber connections are up before the note is written.
        await new Promise((r) => setTimeout(r, 300));
        const r = await new McpTestClient(a.url, { headers: AUTH }).callTool('note', { text: 'shared' });
        expect(r.body.result.structuredContent).toEqual({ noted: 'shared' });
        expect((await st.next()).params).toMatchObject({ uri: 'notes://today' });
        const read = await new McpTestClient(b.url, { headers: AUTH }).readResource('notes://today');
        expect(read.body.result.contents[0].text).toBe('shared\n');
      } finally {
        st?.close();
        await a.stop();
        await b.stop();
      }
    });
  });
});

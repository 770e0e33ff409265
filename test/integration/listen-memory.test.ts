/**
 * A subscriptions/listen stream keeps its bounded filter, not the request that opened it: a server in a child
 * process with a 96 MB heap holds 40 open listen streams whose requests each carried 3.5 MiB (in the params, in
 * `_meta`, or in an unknown member of the filter) and still answers. The filter's own bounds (each URI, all the
 * URIs together, the id) refuse a request over them with -32602 `subscription_too_large`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { McpTestClient } from '../../testing/index';
import { dispatch } from '../../middleware/dispatch/index';
import { ToolRegistry } from '../../handlers/tools/index';
import { freePort } from '../support/ports';
import { PLATFORMS, type Stack, stack } from '../support/dispatch-harness';
import { envelope, modernHeaders, openStream, post, type Stream } from '../support/streaming';

const ROOT = path.resolve(__dirname, '../..');
const KEY = 'listen-memory-key';
const PADDING = 3.5 * 1024 * 1024;
const HEADERS = { ...modernHeaders('subscriptions/listen'), Authorization: `Bearer ${KEY}` };

interface Child {
  proc: ChildProcess;
  url: string;
  stderr: () => string;
  exited: () => boolean;
}

async function startServer(): Promise<Child> {
  const port = await freePort();
  const proc = spawn(
    process.execPath,
    ['--max-old-space-size=96', '--import', 'tsx', 'test/support/listen-memory-server.ts'],
    { cwd: ROOT, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let err = '';
  let exited = false;
  proc.stderr!.on('data', (d: Buffer) => {
    if (err.length < 64 * 1024) err += d.toString();
  });
  proc.on('exit', () => (exited = true));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no ready line: ' + err)), 30_000);
    proc.stdout!.on('data', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { proc, url: `http://127.0.0.1:${port}/mcp`, stderr: () => err, exited: () => exited };
}

/** A listen request carrying `PADDING` characters, distinct per `i`, in one of three places. */
function paddedListen(i: number): unknown {
  const pad = `p${i}-` + 'x'.repeat(PADDING - 8);
  const filter: Record<string, unknown> = { toolsListChanged: true };
  const params: Record<string, unknown> = { notifications: filter, _meta: envelope() };
  if (i % 3 === 0) params.padding = pad;
  else if (i % 3 === 1) (params._meta as Record<string, unknown>).padding = pad;
  else filter.padding = pad;
  return { jsonrpc: '2.0', id: i, method: 'subscriptions/listen', params };
}

describe('a 96 MB server and 40 listen streams opened by 3.5 MiB requests', () => {
  let child: Child;
  const streams: Stream[] = [];
  beforeAll(async () => {
    child = await startServer();
  }, 40_000);
  afterAll(() => {
    for (const s of streams) s.close();
    if (!child.exited()) child.proc.kill('SIGTERM');
  });

  test('every stream is acknowledged and stays open; the server still answers', async () => {
    for (let i = 0; i < 40; i++) {
      const s = await openStream(child.url, paddedListen(i), HEADERS);
      streams.push(s);
      expect(s.status).toBe(200);
      const ack = await s.next();
      expect(ack.method).toBe('notifications/subscriptions/acknowledged');
      expect(ack.params).toMatchObject({ notifications: { toolsListChanged: true } });
    }
    expect(child.exited()).toBe(false);
    const c = new McpTestClient(child.url, { headers: { Authorization: `Bearer ${KEY}` } });
    const list = await c.listTools();
    expect(list.status).toBe(200);
    expect(list.body.result.tools).toHaveLength(1);
    expect(child.exited()).toBe(false);
    expect(child.stderr()).not.toMatch(/heap out of memory/i);
  }, 120_000);
});

describe.each(PLATFORMS)('the bounds of a listen filter on %s', (platform) => {
  let s: Stack;
  let url: string;
  beforeAll(async () => {
    const tools = new ToolRegistry({ tools: [] });
    const resources = {
      list: () => ({ resources: [] }),
      read: () => ({ contents: [] }),
    };
    s = await stack(platform, [
      dispatch({
        anonymous: true,
        handlers: { tools, resources },
        serverInfo: { name: 'bounds', version: '1' },
        capabilities: { tools: { listChanged: true } },
        streams: { keepAliveMs: 0 },
      }),
    ]);
    url = `${s.base}/mcp`;
  });
  afterAll(() => s.close());

  const listen = (id: number | string, notifications: unknown) => ({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications, _meta: envelope() },
  });

  test.each([
    [
      'a URI over 2048 characters',
      1,
      { resourceSubscriptions: ['file:///' + 'a'.repeat(2041)] },
      'uri_length',
    ],
    [
      'URIs over 128 KiB together',
      2,
      { resourceSubscriptions: Array.from({ length: 100 }, (_, i) => `file:///${i}/` + 'b'.repeat(2000)) },
      'filter_length',
    ],
    ['an id over 1024 characters', 'i'.repeat(1025), { toolsListChanged: true }, 'subscription_id_length'],
  ])('%s → -32602 subscription_too_large', async (_what, id, filter, limit) => {
    const r = await post(url, listen(id, filter), modernHeaders('subscriptions/listen'));
    expect(r.status).toBe(200);
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]).toMatchObject({ id, error: { code: -32602, data: { limit } } });
  });

  test('at the bounds, the stream opens', async () => {
    const uris = Array.from({ length: 64 }, (_, i) => `file:///${i}/` + 'c'.repeat(2048 - 12));
    const st = await openStream(
      url,
      listen('i'.repeat(1024), { toolsListChanged: true, resourceSubscriptions: uris }),
      modernHeaders('subscriptions/listen'),
    );
    const ack = await st.next();
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    st.close();
  });
});

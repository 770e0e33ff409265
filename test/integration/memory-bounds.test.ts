/**
 * Memory stays bounded whatever the caller sends: the demo server (`npm start`, the full stack) in a child
 * process with a 96 MB heap takes legacy requests and notifications whose method names are 3.5 MiB long (under
 * parse's 4 MiB body limit), distinct ones and slashed ones, and still answers tools/list afterwards. A method
 * name past 256 characters is refused by parse (400 -32600 `method_too_long`, the id echoed) in both eras.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { McpTestClient } from '../../testing/index';
import { startDemo, type RunningDemo } from '../support/demo';
import { freePort } from '../support/ports';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const ROOT = path.resolve(__dirname, '../..');
const NAME_LENGTH = 3.5 * 1024 * 1024;
const HEADERS = {
  Authorization: 'Bearer demo-token',
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-11-25',
};

interface Child {
  proc: ChildProcess;
  url: string;
  stderr: () => string;
  exited: () => boolean;
}

/** `node --max-old-space-size=96 --import tsx examples/server.ts`, resolved once it prints its URL. */
async function startServer(): Promise<Child> {
  const port = await freePort();
  const proc = spawn(process.execPath, ['--max-old-space-size=96', '--import', 'tsx', 'examples/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      MCP_API_KEYS: `demo:sha256:${sha('demo-token')}:users`,
      MCP_AUDIT_LOG: '/dev/null',
      MCP_RPM: '0',
      MCP_USER_CONCURRENCY: '0',
      MCP_GLOBAL_CONCURRENCY: '0',
      MCP_COST_BUDGET_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  let exited = false;
  proc.stderr!.on('data', (d: Buffer) => {
    if (err.length < 64 * 1024) err += d.toString();
  });
  proc.on('exit', () => (exited = true));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('no ready line: ' + out + err)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { proc, url: `http://127.0.0.1:${port}/mcp`, stderr: () => err, exited: () => exited };
}

/**
 * POST one message whose method is `method`, on a connection of its own (no keep-alive: an idle socket the
 * server closes between two sends would look like a dropped request); the status, or the transport error.
 */
function send(url: string, method: string, id?: number): Promise<number | string> {
  const body = JSON.stringify(id === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id, method });
  return new Promise((resolve) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { ...HEADERS, 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', (e) => resolve(String(e)));
      },
    );
    req.on('error', (e) => resolve(String(e)));
    req.end(body);
  });
}

/** A name of `NAME_LENGTH` characters, distinct per `i`. */
const distinctName = (i: number): string => {
  const tag = `m${i}-`;
  return tag + 'x'.repeat(NAME_LENGTH - tag.length);
};
/** `a/a/a/…` of `NAME_LENGTH` characters: every segment a lower-case letter the fold would upper-case. */
const slashedName = (i: number): string => `n${i}/` + 'a/'.repeat(NAME_LENGTH / 2 - 2) + 'a';

describe('a 96 MB server and 3.5 MiB method names', () => {
  let child: Child;
  beforeAll(async () => {
    child = await startServer();
  }, 40_000);
  afterAll(() => {
    if (!child.exited()) child.proc.kill('SIGTERM');
  });

  test('keeps answering after 40 legacy requests with distinct names and slashed notifications', async () => {
    const statuses: Array<number | string> = [];
    for (let i = 0; i < 40; i += 4) {
      const batch = [0, 1, 2, 3].map((k) => send(child.url, distinctName(i + k), i + k + 1));
      statuses.push(...(await Promise.all(batch)));
    }
    for (let i = 0; i < 8; i += 2) {
      const batch = [0, 1].map((k) => send(child.url, slashedName(i + k)));
      statuses.push(...(await Promise.all(batch)));
    }
    for (let i = 0; i < 4; i++) statuses.push(await send(child.url, slashedName(100 + i), 1000 + i));
    // Every message got an HTTP answer (a refusal or not), none a dropped connection or a 5xx.
    expect(child.exited()).toBe(false);
    expect(statuses.filter((s) => typeof s !== 'number' || s >= 500)).toEqual([]);
    const c = new McpTestClient(child.url, {
      era: 'legacy',
      headers: { Authorization: 'Bearer demo-token' },
    });
    const list = await c.listTools();
    expect(list.status).toBe(200);
    expect(list.body.result.tools.length).toBeGreaterThan(0);
    expect(child.exited()).toBe(false);
    expect(child.stderr()).not.toMatch(/heap out of memory/i);
  }, 120_000);
});

describe.each(['modern', 'legacy'] as const)('a method name past 256 characters (%s)', (era) => {
  let d: RunningDemo;
  beforeAll(async () => {
    d = await startDemo({ MCP_API_KEYS: `demo:sha256:${sha('demo-token')}:users` });
  });
  afterAll(() => d.stop());
  const client = () => new McpTestClient(d.url, { era, headers: { Authorization: 'Bearer demo-token' } });

  test('a request is refused by parse: 400 -32600 method_too_long, the id echoed', async () => {
    const r = await client().request('tools/' + 'x'.repeat(251), {}, { id: 'long-1' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 'long-1', error: { code: -32600 } });
    expect(r.body.error.message).toMatch(/256/);
  });

  test('a notification is refused the same way, without an id', async () => {
    const r = await client().notify('notifications/' + 'a/'.repeat(200) + 'a');
    expect(r.status).toBe(400);
    expect(r.body.error?.code).toBe(-32600);
    expect(r.body).not.toHaveProperty('id');
  });

  test('a name of exactly 256 characters is a method like any other: unknown, -32601', async () => {
    const r = await client().request('tools/' + 'x'.repeat(250), {}, { id: 3 });
    expect(r.body).toMatchObject({ id: 3, error: { code: -32601 } });
  });
});

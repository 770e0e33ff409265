import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import request from 'supertest';
import { parse } from '../../middleware/parse/index';
import { rejectBatch } from '../../middleware/reject-batch/index';
import { guardOrigin } from '../../middleware/guard-origin/index';
import { methodGuard } from '../../middleware/method-guard/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { checkHeaders } from '../../middleware/check-headers/index';
import { FLAVOURS, makeServer } from '../support/servers';
import type { Middleware } from '../../core/types';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const CI = 'io.modelcontextprotocol/clientInfo';
const META = { [PV]: '2026-07-28', [CI]: { name: 't', version: '1' }, [CC]: {} };

function post(server: http.Server, body: string | object, headers: Record<string, string> = {}) {
  const r = request(server).post('/mcp').set('Content-Type', 'application/json');
  for (const [k, v] of Object.entries(headers)) r.set(k, v);
  return r.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Send raw bytes (for bodies and header values supertest would refuse or re-encode). */
async function rawPost(
  server: http.Server,
  head: Record<string, string>,
  body: Buffer | string,
): Promise<{ status: number; body: any }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [
    `POST /mcp HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    `Content-Length: ${payload.length}`,
    'Connection: close',
  ];
  for (const [k, v] of Object.entries(head)) lines.push(`${k}: ${v}`);
  const text = await new Promise<string>((resolve, reject) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.write(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8'), payload]));
    });
    let buf = '';
    c.on('data', (d) => (buf += d.toString('utf8')));
    c.on('end', () => resolve(buf));
    c.on('error', reject);
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const [headPart, ...rest] = text.split('\r\n\r\n');
  const status = Number(headPart!.split(' ')[1]);
  const bodyText = rest.join('\r\n\r\n');
  return { status, body: bodyText ? JSON.parse(bodyText) : undefined };
}

function expectJsonRpcError(res: request.Response, status: number, code: number, id?: unknown) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(res.body.jsonrpc).toBe('2.0');
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  if (id === undefined) expect(res.body).not.toHaveProperty('id');
  else expect(res.body.id).toBe(id);
}

describe.each(FLAVOURS)('parse() on %s', (flavour) => {
  let server: http.Server;
  beforeAll(() => {
    server = makeServer(flavour, [parse({ limit: 1024 })]);
  });

  test('a request passes with req.locals.mcp attached', async () => {
    const res = await post(server, {
      jsonrpc: '2.0',
      id: 0,
      method: 'tools/call',
      params: { name: 'hello', arguments: { who: 'x' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      passed: true,
      kind: 'request',
      method: 'tools/call',
      id: 0,
      target: 'hello',
    });
  });

  test('non-JSON Content-Type → 415', async () => {
    const res = await request(server)
      .post('/mcp')
      .set('Content-Type', 'text/plain')
      .send('{"jsonrpc":"2.0","id":1,"method":"x"}');
    expectJsonRpcError(res, 415, -32600);
  });

  test('missing Content-Type → 415', async () => {
    const res = await request(server).post('/mcp').send(Buffer.from('{}'));
    expectJsonRpcError(res, 415, -32600);
  });

  test('application/json with parameters is accepted; a foreign charset is not', async () => {
    const ok = await post(
      server,
      { jsonrpc: '2.0', id: 1, method: 'x' },
      { 'Content-Type': 'Application/JSON; charset=UTF-8' },
    );
    expect(ok.status).toBe(200);
    const bad = await post(
      server,
      { jsonrpc: '2.0', id: 1, method: 'x' },
      { 'Content-Type': 'application/json; charset=latin1' },
    );
    expect(bad.status).toBe(415);
  });

  test('body over the limit (Content-Length) → 413 before parsing', async () => {
    const res = await post(server, '{"pad":"' + 'x'.repeat(2000) + '"}');
    expectJsonRpcError(res, 413, -32600);
  });

  test('body over the limit without Content-Length (chunked) → 413', async () => {
    const server = makeServer(flavour, [parse({ limit: 1024 })]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const out = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/mcp',
          headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        },
        (resp) => {
          let b = '';
          resp.on('data', (c) => (b += c));
          resp.on('end', () => resolve({ status: resp.statusCode!, body: b }));
        },
      );
      r.on('error', reject);
      for (let i = 0; i < 10; i++) r.write('{"pad":"' + 'y'.repeat(300));
      r.end();
    });
    server.closeAllConnections();
    server.close();
    expect(out.status).toBe(413);
    expect(JSON.parse(out.body).error.code).toBe(-32600);
  });

  test('invalid JSON → 400 -32700 with no id', async () => {
    expectJsonRpcError(await post(server, '{"jsonrpc":"2.0","id":5,'), 400, -32700);
    expectJsonRpcError(await post(server, ''), 400, -32700);
  });

  test('invalid UTF-8 → 400 -32700', async () => {
    const s = makeServer(flavour, [parse({ limit: 1024 })]);
    const res = await rawPost(
      s,
      { 'Content-Type': 'application/json' },
      Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32700);
    expect(res.body).not.toHaveProperty('id');
  });

  test('a batch → 400 -32600 with no id', async () => {
    expectJsonRpcError(await post(server, '[{"jsonrpc":"2.0","id":1,"method":"x"}]'), 400, -32600);
  });

  test('members named twice → 400 -32600, id echoed when readable', async () => {
    expectJsonRpcError(
      await post(server, '{"jsonrpc":"2.0","id":9,"method":"tools/list","Method":"tools/call"}'),
      400,
      -32600,
      9,
    );
  });

  test('"id": null → 400 -32600 without id', async () => {
    expectJsonRpcError(await post(server, '{"jsonrpc":"2.0","id":null,"method":"ping"}'), 400, -32600);
  });

  test('__proto__ never reaches a prototype', async () => {
    const res = await post(
      server,
      '{"jsonrpc":"2.0","id":1,"method":"x","params":{"__proto__":{"polluted":true}}}',
    );
    expectJsonRpcError(res, 400, -32600, 1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('pathological nesting is refused cleanly', async () => {
    const s = makeServer(flavour, [parse({ limit: 1 << 20 })]);
    const res = await post(
      s,
      '{"jsonrpc":"2.0","id":1,"method":"x","params":' + '['.repeat(50000) + ']'.repeat(50000) + '}',
    );
    expectJsonRpcError(res, 400, -32600, 1);
  });

  test('a posted response is parsed (the dispatcher decides what to do with it)', async () => {
    const res = await post(server, { jsonrpc: '2.0', id: 3, result: {} });
    expect(res.body).toMatchObject({ passed: true, kind: 'response', id: 3 });
  });

  test("non-POST gets methodGuard()'s 405 (parse() serves POST only); OPTIONS passes through", async () => {
    const res = await request(server).get('/mcp');
    expect([res.status, res.headers.allow, res.body]).toEqual([
      405,
      'POST',
      { jsonrpc: '2.0', error: { code: -32600, message: 'Method not allowed: use POST' } },
    ]);
    expect((await request(server).options('/mcp')).status).toBe(200);
  });
});

describe('parse() after express.json()', () => {
  const server = makeServer('express', [parse()], { expressJson: true });
  test('uses req.body', async () => {
    const res = await post(server, { jsonrpc: '2.0', id: 'a', method: 'tools/list' });
    expect(res.body).toMatchObject({ passed: true, method: 'tools/list', id: 'a' });
  });
  test('an array body from express.json is still a batch', async () => {
    expectJsonRpcError(await post(server, [{ jsonrpc: '2.0', id: 1, method: 'x' }]), 400, -32600);
  });
  test('forbidden members are still refused', async () => {
    const res = await post(
      server,
      '{"jsonrpc":"2.0","id":1,"method":"x","params":{"constructor":{"prototype":{}}}}',
    );
    expectJsonRpcError(res, 400, -32600, 1);
  });
});

describe('parse() options are validated at construction', () => {
  test.each([
    [{ limit: -1 }, /"limit"/],
    [{ limit: 'lots' }, /"limit"/],
    [{ limit: 0 }, /"limit"/],
    [{ maxDepth: 1 }, /"maxDepth"/],
    [{ maxDepth: 2.5 }, /"maxDepth"/],
  ])('%j', (opts, msg) => {
    expect(() => parse(opts as never)).toThrow(TypeError);
    expect(() => parse(opts as never)).toThrow(msg);
  });
  test('sizes in words', () => {
    expect(() => parse({ limit: '512kb' })).not.toThrow();
    expect(() => parse({ limit: '4mb' })).not.toThrow();
  });
});

describe.each(FLAVOURS)('rejectBatch() on %s', (flavour) => {
  const server = makeServer(flavour, [rejectBatch()]);
  test.each([['[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]'], ['[]'], ['  \n\t [1]'], ['\uFEFF[1]']])(
    '%j → 400 -32600, no id',
    async (body) => {
      expectJsonRpcError(await post(server, body), 400, -32600);
    },
  );
  test('a malformed array is invalid JSON, not a batch → 400 -32700, no id', async () => {
    expectJsonRpcError(await post(server, '[{"a":1}'), 400, -32700);
  });
  test('refused whatever the Content-Type', async () => {
    const res = await request(server).post('/mcp').set('Content-Type', 'text/plain').send('[1]');
    expectJsonRpcError(res, 400, -32600);
  });
  test('a single object passes', async () => {
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.body.passed).toBe(true);
  });
  test('works before parse() and shares the body read', async () => {
    const s = makeServer(flavour, [rejectBatch(), parse()]);
    const res = await post(s, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(res.body).toMatchObject({ passed: true, id: 2, method: 'tools/list' });
    expectJsonRpcError(await post(s, '[1]'), 400, -32600);
  });
  test('works after parse()', async () => {
    const s = makeServer(flavour, [parse(), rejectBatch()]);
    expect((await post(s, { jsonrpc: '2.0', id: 2, method: 'x' })).body.passed).toBe(true);
    expectJsonRpcError(await post(s, '[1]'), 400, -32600);
  });
});

describe.each(FLAVOURS)('guardOrigin() on %s', (flavour) => {
  const closed = makeServer(flavour, [guardOrigin()]);
  const open = makeServer(flavour, [
    guardOrigin({
      allowedOrigins: ['http://localhost:3000'],
      allowedHosts: ['127.0.0.1:8075', 'localhost:8075'],
    }),
  ]);
  const any = makeServer(flavour, [guardOrigin({ allowedOrigins: '*' })]);

  test('no Origin passes', async () => {
    expect((await post(closed, { jsonrpc: '2.0', id: 1, method: 'x' })).status).toBe(200);
  });
  test('any Origin is refused by default → 403, no id', async () => {
    expectJsonRpcError(
      await post(closed, { jsonrpc: '2.0', id: 1, method: 'x' }, { Origin: 'http://evil.example.com' }),
      403,
      403,
    );
  });
  test('allow-listed Origin passes (case-insensitively); others 403', async () => {
    const ok = await post(
      open,
      { jsonrpc: '2.0', id: 1, method: 'x' },
      { Origin: 'HTTP://LOCALHOST:3000', Host: 'localhost:8075' },
    );
    expect(ok.status).toBe(200);
    const bad = await post(
      open,
      { jsonrpc: '2.0', id: 1, method: 'x' },
      { Origin: 'http://localhost:3001', Host: 'localhost:8075' },
    );
    expect(bad.status).toBe(403);
  });
  test('Host not on the list → 403 (DNS rebinding)', async () => {
    const res = await post(open, { jsonrpc: '2.0', id: 1, method: 'x' }, { Host: 'evil.example.com' });
    expectJsonRpcError(res, 403, 403);
  });
  test("'*' switches the Origin check off", async () => {
    expect(
      (await post(any, { jsonrpc: '2.0', id: 1, method: 'x' }, { Origin: 'http://anything' })).status,
    ).toBe(200);
  });
  test('runs before the method guard: GET with a foreign Origin → 403, not 405', async () => {
    const s = makeServer(flavour, [guardOrigin(), methodGuard()]);
    const res = await request(s).get('/mcp').set('Origin', 'http://evil.example.com');
    expect(res.status).toBe(403);
  });
  test('bad options throw TypeErrors naming the option', () => {
    expect(() => guardOrigin({ allowedOrigins: 'http://x' as never })).toThrow(/"allowedOrigins"/);
    expect(() => guardOrigin({ allowedHosts: [''] })).toThrow(/"allowedHosts"/);
    expect(() => guardOrigin({ allowedOrigins: ['a, b'] })).toThrow(TypeError);
  });
});

describe.each(FLAVOURS)('methodGuard() on %s', (flavour) => {
  const server = makeServer(flavour, [methodGuard()]);
  test.each(['get', 'delete', 'put', 'patch'] as const)('%s → 405 with Allow: POST', async (m) => {
    const res = await request(server)[m]('/mcp');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body.error.code).toBe(-32600);
    expect(res.body).not.toHaveProperty('id');
  });
  test('POST passes', async () => {
    expect((await post(server, { jsonrpc: '2.0', id: 1, method: 'x' })).status).toBe(200);
  });
});

/** Base modern request R (spec.md §8) with one thing varied per case. */
function modern(
  method = 'tools/list',
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> | null = META,
) {
  const p: Record<string, unknown> = { ...params };
  if (meta) p._meta = meta;
  return { jsonrpc: '2.0', id: 1, method, params: p };
}
const H = (method = 'tools/list', extra: Record<string, string> = {}) => ({
  'MCP-Protocol-Version': '2026-07-28',
  'Mcp-Method': method,
  ...extra,
});

const REGION_SCHEMA = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
  },
};

describe.each(FLAVOURS)('classifyRevision() + checkHeaders(): spec.md §8.A on %s', (flavour) => {
  // checkHeaders alone (it classifies lazily), with the x-mcp-header lookup.
  const { paramHeaders } = jest.requireActual(
    '../../lib/xmcpheader',
  ) as typeof import('../../lib/xmcpheader');
  const pr = paramHeaders(REGION_SCHEMA);
  if (!pr.ok) throw new Error(pr.error);
  const lookup = (name: string) => (name === 'get_weather' ? pr.params : undefined);
  const chains: Record<string, Middleware[]> = {
    'checkHeaders alone': [checkHeaders({ paramHeaders: lookup })],
    'parse → classifyRevision → checkHeaders': [
      parse(),
      classifyRevision(),
      checkHeaders({ paramHeaders: lookup }),
    ],
    'checkHeaders → classifyRevision (any order)': [
      checkHeaders({ paramHeaders: lookup }),
      classifyRevision(),
    ],
  };

  type Row = [string, object, Record<string, string>, number, number | null, unknown?];
  const call = (args: Record<string, unknown>, extra: Record<string, string> = {}) =>
    [
      modern('tools/call', { name: 'get_weather', arguments: args }),
      H('tools/call', { 'Mcp-Name': 'get_weather', ...extra }),
    ] as const;
  const rows: Row[] = [
    ['R passes', modern(), H(), 200, null],
    ['5 params {} (no _meta) → 400 -32602', modern('tools/list', {}, null), H(), 400, -32602],
    [
      '6 _meta without protocolVersion → 400 -32602',
      modern('tools/list', {}, { [CC]: {} }),
      H(),
      400,
      -32602,
    ],
    [
      '7 _meta without clientCapabilities → 400 -32602',
      modern('tools/list', {}, { [PV]: '2026-07-28' }),
      H(),
      400,
      -32602,
    ],
    ['8 no clientInfo → 200', modern('tools/list', {}, { [PV]: '2026-07-28', [CC]: {} }), H(), 200, null],
    [
      '9 1900-01-01 in both → 400 -32022',
      modern('tools/list', {}, { ...META, [PV]: '1900-01-01' }),
      H('tools/list', { 'MCP-Protocol-Version': '1900-01-01' }),
      400,
      -32022,
      { supported: ['2026-07-28'], requested: '1900-01-01' },
    ],
    [
      '10 header 2026 vs body 1900 → 400 -32020',
      modern('tools/list', {}, { ...META, [PV]: '1900-01-01' }),
      H(),
      400,
      -32020,
    ],
    ['11 MCP-Protocol-Version removed → 400 -32020', modern(), { 'Mcp-Method': 'tools/list' }, 400, -32020],
    ['12 Mcp-Method removed → 400 -32020', modern(), { 'MCP-Protocol-Version': '2026-07-28' }, 400, -32020],
    ['13 Mcp-Method prompts/list → 400 -32020', modern(), H('prompts/list'), 400, -32020],
    ['14 Mcp-Method TOOLS/LIST → 400 -32020', modern(), H('TOOLS/LIST'), 400, -32020],
    [
      '15 lower-case header names → 200',
      modern(),
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      200,
      null,
    ],
    [
      '15 upper-case header names → 200',
      modern(),
      { 'MCP-PROTOCOL-VERSION': '2026-07-28', 'MCP-METHOD': 'tools/list' },
      200,
      null,
    ],
    [
      '16 tools/call without Mcp-Name → 400 -32020',
      modern('tools/call', { name: 'x', arguments: {} }),
      H('tools/call'),
      400,
      -32020,
    ],
    [
      '16 Mcp-Name wrong → 400 -32020',
      modern('tools/call', { name: 'x', arguments: {} }),
      H('tools/call', { 'Mcp-Name': 'wrong' }),
      400,
      -32020,
    ],
    [
      '16 Mcp-Name with OWS → 200',
      modern('tools/call', { name: 'x', arguments: {} }),
      H('tools/call', { 'Mcp-Name': '   x  ' }),
      200,
      null,
    ],
    [
      '17 resources/read Mcp-Name = uri → 200',
      modern('resources/read', { uri: 'file:///projects/myapp/config.json' }),
      H('resources/read', { 'Mcp-Name': 'file:///projects/myapp/config.json' }),
      200,
      null,
    ],
    [
      '17 resources/read missing Mcp-Name → 400 -32020',
      modern('resources/read', { uri: 'docs://a' }),
      H('resources/read'),
      400,
      -32020,
    ],
    [
      '17 prompts/get mismatch → 400 -32020',
      modern('prompts/get', { name: 'a' }),
      H('prompts/get', { 'Mcp-Name': 'b' }),
      400,
      -32020,
    ],
    [
      '18 sentinel Mcp-Name → 200',
      modern('tools/call', { name: 'x', arguments: {} }),
      H('tools/call', { 'Mcp-Name': '=?base64?eA==?=' }),
      200,
      null,
    ],
    [
      '18 bad padding → 400 -32020',
      modern('tools/call', { name: 'get_weather', arguments: { region: 'a' } }),
      H('tools/call', { 'Mcp-Name': '=?base64?Z2V0X3dlYXRoZXI?=', 'Mcp-Param-Region': 'a' }),
      400,
      -32020,
    ],
    [
      '18 =?base64?!!!?= → 400 -32020',
      modern('tools/call', { name: 'x' }),
      H('tools/call', { 'Mcp-Name': '=?base64?!!!?=' }),
      400,
      -32020,
    ],
    [
      '18 =?BASE64? literal → 400 -32020',
      modern('tools/call', { name: 'x' }),
      H('tools/call', { 'Mcp-Name': '=?BASE64?eA==?=' }),
      400,
      -32020,
    ],
    [
      '19 Mcp-Param-Region matches → 200',
      ...call({ region: 'us-west1' }, { 'Mcp-Param-Region': 'us-west1' }),
      200,
      null,
    ],
    ['19 Mcp-Param-Region missing → 400 -32020', ...call({ region: 'us-west1' }), 400, -32020],
    [
      '19 Mcp-Param-Region differs → 400 -32020',
      ...call({ region: 'us-west1' }, { 'Mcp-Param-Region': 'eu-west1' }),
      400,
      -32020,
    ],
    ['19 region null, no header → 200', ...call({ region: null }), 200, null],
    ['19 region absent, no header → 200', ...call({}), 200, null],
    [
      '19 sentinel Mcp-Param-Region → 200',
      ...call({ region: 'us-west1' }, { 'Mcp-Param-Region': '=?base64?dXMtd2VzdDE=?=' }),
      200,
      null,
    ],
    [
      '19 integers numerically: 42.0 = 42 → 200',
      ...call({ count: 42 }, { 'Mcp-Param-Count': '42.0' }),
      200,
      null,
    ],
    ['27 notification is not header-checked', { jsonrpc: '2.0', method: 'notifications/x' }, {}, 200, null],
    [
      '29 Mcp-Session-Id and Last-Event-ID are ignored',
      modern(),
      H('tools/list', { 'Mcp-Session-Id': 'abc', 'Last-Event-ID': '5' }),
      200,
      null,
    ],
    [
      'legacy request: no header checks, stray Mcp-Method ignored',
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
      { 'Mcp-Method': 'resources/read' },
      200,
      null,
    ],
    [
      'legacy with unsupported header → 400',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'MCP-Protocol-Version': '1999-01-01' },
      400,
      -32602,
    ],
    [
      'initialize with modern header, no envelope → legacy, passes',
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } },
      { 'MCP-Protocol-Version': '2026-07-28' },
      200,
      null,
    ],
  ];

  describe.each(Object.entries(chains))('%s', (_name, chain) => {
    const server = makeServer(flavour, chain);
    test.each(rows.map((r) => [r[0], r] as const))('%s', async (_l, row) => {
      const [, body, headers, status, code, data] = row;
      const res = await post(server, body, headers);
      expect(res.status).toBe(status);
      if (code === null) {
        expect(res.body.passed).toBe(true);
      } else {
        expect(res.body.error.code).toBe(code);
        const id = (body as { id?: unknown }).id;
        if (id !== undefined) expect(res.body.id).toBe(id);
        if (data !== undefined) expect(res.body.error.data).toEqual(data);
      }
    });
  });

  test('19 a recognized Mcp-Param-* with invalid characters (raw non-ASCII) → 400 -32020', async () => {
    // Node itself answers 400 to control characters in header values; obs-text reaches us and is refused.
    const s = makeServer(flavour, [checkHeaders({ paramHeaders: lookup })]);
    const body = JSON.stringify(
      modern('tools/call', { name: 'get_weather', arguments: { region: 'zürich' } }),
    );
    const res = await rawPost(
      s,
      {
        'Content-Type': 'application/json',
        ...H('tools/call', { 'Mcp-Name': 'get_weather', 'Mcp-Param-Region': 'zürich' }),
      },
      body,
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);
    expect(res.body.id).toBe(1);
  });

  test('the era is attached for later middlewares', async () => {
    const server = makeServer(flavour, [classifyRevision()]);
    expect((await post(server, modern(), H())).body.era).toBe('modern');
    expect((await post(server, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.era).toBe('legacy');
  });

  test('options are validated', () => {
    expect(() => checkHeaders({ paramHeaders: 'x' as never })).toThrow(/"paramHeaders"/);
    expect(() => classifyRevision({ modernVersions: ['latest'] })).toThrow(/"modernVersions"/);
  });
});

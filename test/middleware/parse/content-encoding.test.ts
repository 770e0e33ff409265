/** parse(): a Content-Encoding is decoded under the limit (gzip, deflate, br), or refused. */
import http from 'node:http';
import zlib from 'node:zlib';
import { bodyCoding } from '../../../core/body-coding';
import { parse } from '../../../middleware/parse/index';
import { FLAVOURS, makeServer } from '../../support/servers';
import { close, listen } from '../../support/dispatch-harness';

describe('bodyCoding(): what a Content-Encoding value names', () => {
  test.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['IDENTITY', 'identity'],
    ['gzip', 'gzip'],
    [' GZIP ', 'gzip'],
    ['x-gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['br', 'br'],
    ['gzip, identity', 'gzip'],
    ['identity, br', 'br'],
    [', gzip,', 'gzip'],
  ])('%j → %s', (header, coding) => {
    expect(bodyCoding(header)).toBe(coding);
  });

  test.each([
    'x-unknown',
    'compress',
    'zstd',
    'gzip, br',
    'gzip, gzip',
    'deflate, gzip',
    'gzip;q=1',
    'toString',
    '__proto__',
    'constructor',
  ])('%j is refused: 415 unsupported_encoding', (header) => {
    expect(bodyCoding(header)).toMatchObject({
      ok: false,
      reason: 'unsupported_encoding',
      status: 415,
      code: -32600,
    });
  });
});

const MESSAGE = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

/** A message padded to exactly `size` bytes of JSON. */
function sized(size: number): Buffer {
  const empty = JSON.stringify({ ...MESSAGE, params: { pad: '' } }).length;
  return Buffer.from(JSON.stringify({ ...MESSAGE, params: { pad: 'x'.repeat(size - empty) } }));
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

function post(base: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const h = { 'Content-Type': 'application/json', ...headers };
    const req = http.request(`${base}/mcp`, { method: 'POST', headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(FLAVOURS)('parse({ limit: 1024 }) on %s', (flavour) => {
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    server = makeServer(flavour, [parse({ limit: 1024 })]);
    base = await listen(server);
  });
  afterAll(() => close(server));

  test.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('%s: a body decoding to exactly the limit is parsed', async (coding, encode) => {
    const res = await post(base, encode(sized(1024)), { 'Content-Encoding': coding });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ passed: true, method: 'tools/list', id: 1 });
  });

  test.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('%s: one decoded byte over the limit is 413, the connection closed', async (coding, encode) => {
    const sent = encode(sized(1025));
    expect(sent.length).toBeLessThan(1024);
    const res = await post(base, sent, { 'Content-Encoding': coding });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Request body exceeds 1024 bytes once decoded' },
    });
  });

  test('a compressed body over the limit as sent is 413 before it is decoded', async () => {
    const noise = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251));
    const res = await post(base, zlib.gzipSync(noise, { level: 0 }), { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(res.body.error.message).toBe('Request body exceeds 1024 bytes');
  });

  test.each([
    ['gzip', Buffer.from(JSON.stringify(MESSAGE))],
    ['gzip', zlib.gzipSync(JSON.stringify(MESSAGE)).subarray(0, 12)],
    ['gzip', Buffer.concat([zlib.gzipSync(JSON.stringify(MESSAGE)), Buffer.from('trailing')])],
    ['deflate', zlib.gzipSync(JSON.stringify(MESSAGE))],
    ['br', Buffer.from(JSON.stringify(MESSAGE))],
  ])('a body that is not valid %s is 400 -32700, not read as plain', async (coding, body) => {
    const res = await post(base, body, { 'Content-Encoding': coding });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: `Parse error: the body is not valid ${coding}` },
    });
  });

  test('an unknown coding is 415 with Accept-Encoding, whatever the body', async () => {
    const res = await post(base, Buffer.from(JSON.stringify(MESSAGE)), { 'Content-Encoding': 'x-unknown' });
    expect(res.status).toBe(415);
    expect(res.headers['accept-encoding']).toBe('gzip, deflate, br');
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Content-Encoding must be gzip, deflate, br or identity' },
    });
  });

  test('the Content-Type is checked first: text/plain with an unknown coding is unsupported_media_type', async () => {
    const res = await post(base, Buffer.from('x'), {
      'Content-Type': 'text/plain',
      'Content-Encoding': 'x-unknown',
    });
    expect(res.status).toBe(415);
    expect(res.body.error.message).toBe('Content-Type must be application/json');
    expect(res.headers['accept-encoding']).toBeUndefined();
  });
});

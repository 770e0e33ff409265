/**
 * guardOrigin(): a Host or Origin refusal says what arrived and what is allowed, in the error's `data` and in
 * the log line, clipped and sanitized (the values are the client's), on bare node:http and Express.
 */
import http, { type Server } from 'node:http';
import request from 'supertest';
import { guardOrigin } from '../../../middleware/guard-origin/index';
import { PLATFORMS, close, listen, serve } from '../../support/dispatch-harness';
import { UNSAFE, jsonLogger } from '../../support/json-logger';

const HOSTS = ['localhost:3000', '127.0.0.1:3000'];

/** POST `{}` with these header lines exactly (a flat name, value list: a name may repeat). */
function postWithLines(url: string, lines: string[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/mcp`,
      { method: 'POST', headers: [...lines, 'Content-Length', '2'] },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

describe.each(PLATFORMS)('guardOrigin refusals name what arrived and what is allowed (%s)', (platform) => {
  let server: Server;
  let url: string;
  let log: ReturnType<typeof jsonLogger>;
  beforeEach(async () => {
    log = jsonLogger();
    server = serve(platform, [
      guardOrigin({ allowedOrigins: ['https://app.example'], allowedHosts: HOSTS, logger: log.logger }),
    ]);
    url = await listen(server);
  });
  afterEach(() => close(server));

  test('a Host not on the list: 403 with data { received, allowed }, and the same in the log', async () => {
    const r = await request(url).post('/mcp').set('Host', 'Evil.example:3000').send('{}');
    expect(r.status).toBe(403);
    expect(r.body.id).toBeUndefined();
    expect(r.body.error).toEqual({
      code: 403,
      message: 'Host not allowed',
      data: { received: 'evil.example:3000', allowed: HOSTS },
    });
    expect(log.records('guardOrigin')).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'guardOrigin: Host not allowed',
        reason: 'host_not_allowed',
        received: 'evil.example:3000',
        allowed: HOSTS,
      }),
    ]);
  });

  test('an Origin not on the list: 403 with data { received, allowed }, and the same in the log', async () => {
    const r = await request(url)
      .post('/mcp')
      .set('Host', 'localhost:3000')
      .set('Origin', 'https://evil.example')
      .send('{}');
    expect(r.status).toBe(403);
    expect(r.body.error.data).toEqual({ received: 'https://evil.example', allowed: ['https://app.example'] });
    expect(log.records('guardOrigin')).toEqual([
      expect.objectContaining({
        reason: 'origin_not_allowed',
        received: 'https://evil.example',
        allowed: ['https://app.example'],
      }),
    ]);
  });

  test('two Origin lines: data.received lists both', async () => {
    const r = await postWithLines(url, [
      'Host',
      'localhost:3000',
      'Origin',
      'https://app.example',
      'Origin',
      'https://evil.example',
    ]);
    expect(r.status).toBe(403);
    expect(r.body.error.message).toBe('Origin must be sent once');
    expect(r.body.error.data).toEqual({
      received: ['https://app.example', 'https://evil.example'],
      allowed: ['https://app.example'],
    });
  });

  test('what arrived is clipped and sanitized, in the answer and in the log', async () => {
    const host = `a\u0085\u009b${'x'.repeat(5000)}.example:3000`;
    const r = await request(url).post('/mcp').set('Host', host).send('{}');
    expect(r.status).toBe(403);
    const received = r.body.error.data.received as string;
    expect(received.startsWith('a')).toBe(true);
    expect(received.length).toBeLessThanOrEqual(257);
    expect(received).not.toMatch(UNSAFE);
    const [line] = log.records('guardOrigin');
    expect(line!.received).toBe(received);
  });
});

test('a long allow-list is capped in data, with how many more there are', async () => {
  const hosts = Array.from({ length: 100 }, (_, i) => `h${i}.example:3000`);
  const log = jsonLogger();
  const server = serve('node:http', [guardOrigin({ allowedHosts: hosts, logger: log.logger })]);
  const url = await listen(server);
  try {
    const r = await request(url).post('/mcp').set('Host', 'evil.example:3000').send('{}');
    const allowed = r.body.error.data.allowed as string[];
    expect(allowed.slice(0, 32)).toEqual(hosts.slice(0, 32));
    expect(allowed.slice(32)).toEqual(['… 68 more']);
  } finally {
    await close(server);
  }
});

test('the answer carries data with the default logger too', async () => {
  const server = serve('express', [guardOrigin({ allowedHosts: HOSTS })]);
  const url = await listen(server);
  try {
    const r = await request(url).post('/mcp').set('Host', 'example.com:3000').send('{}');
    expect(r.status).toBe(403);
    expect(r.body.error.data).toEqual({ received: 'example.com:3000', allowed: HOSTS });
  } finally {
    await close(server);
  }
});

test('the logger option is validated when the factory is called', () => {
  expect(() => guardOrigin({ logger: 'stderr' } as never)).toThrow(
    /^guardOrigin: option "logger" must be a logger with an error\(\) method/,
  );
});

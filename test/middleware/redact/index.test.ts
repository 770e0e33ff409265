import request from 'supertest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileRedactor } from '../../../lib/redact';
import { newTally } from '../../../lib/redact/types';
import { dispatch } from '../../../middleware/dispatch/index';
import { parse } from '../../../middleware/parse/index';
import { redact } from '../../../middleware/redact/index';
import { maskOutbound } from '../../../middleware/redact/walk';
import type { CallContext } from '../../../core/contract';
import type { Middleware } from '../../../core/types';
import { PLATFORMS, finalHandler, modern, modernHeaders, serve } from '../../support/observe-harness';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const IMAGE = 'iVBORw0KGgo' + JWT; // base64 data that happens to contain a JWT-like run: blobs are not text

const fixtures = {
  tools: {
    lookup: () => ({
      content: [
        { type: 'text', text: 'mail sergey@acme.com, card 4242 4242 4242 4242 now' },
        { type: 'image', data: IMAGE, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'file:///etc/app.env',
            mimeType: 'text/plain',
            text: 'password: hunter2hunter2hunter2',
          },
        },
        { type: 'resource_link', uri: 'file:///x', name: 'x' },
      ],
      structuredContent: {
        user: { email: 'sergey@acme.com', ip: '10.1.2.3' },
        list: [`Bearer ${JWT}`],
        n: 4242424242424242,
      },
    }),
    clean: () => ({ content: [{ type: 'text', text: 'nothing to see' }] }),
    getter: () => ({
      content: [],
      get structuredContent(): unknown {
        throw new Error('boom');
      },
    }),
  },
  resources: {
    'file:///notes': () => ({
      contents: [
        { uri: 'file:///notes', text: 'call +1 (415) 555-0132' },
        { uri: 'file:///bin', blob: 'AAAA' },
      ],
    }),
  },
  prompts: {
    single: () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'from 192.168.1.10' } }] }),
    array: () => ({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'key -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----' },
          ],
        },
      ],
    }),
  },
};

function call(server: Parameters<typeof request>[0], method: string, params: Record<string, unknown>) {
  return request(server)
    .post('/mcp')
    .set(modernHeaders(method, (params.name ?? params.uri) as string | undefined))
    .send(modern(method, params));
}

describe.each(PLATFORMS)('redact() on %s', (platform) => {
  const mask = serve(platform, [parse(), redact(), finalHandler(fixtures)]);
  const warn = serve(platform, [parse(), redact({ mode: 'warn' }), finalHandler(fixtures)]);
  const off = serve(platform, [parse(), redact({ mode: 'off' }), finalHandler(fixtures)]);

  test('tools/call: text blocks, embedded resource text and structuredContent are masked; blobs are not', async () => {
    const res = await call(mask, 'tools/call', { name: 'lookup', arguments: {} });
    expect(res.status).toBe(200);
    const r = res.body.result;
    expect(r.content[0].text).toBe('mail s***@acme.com, card [masked:card]now');
    expect(r.content[1].data).toBe(IMAGE);
    expect(r.content[2].resource.text).toBe('password: [masked:token]');
    expect(r.content[2].resource.uri).toBe('file:///etc/app.env');
    expect(r.content[3]).toEqual({ type: 'resource_link', uri: 'file:///x', name: 'x' });
    expect(r.structuredContent).toEqual({
      user: { email: 's***@acme.com', ip: '[masked:ip]' },
      list: ['Bearer [masked:jwt]'],
      n: 4242424242424242,
    });
    expect(JSON.parse(res.headers['x-redaction'] as string)).toEqual({
      mode: 'mask',
      fired: ['jwt', 'email', 'token', 'card', 'ip'],
      hits: { email: 2, card: 1, token: 1, jwt: 1, ip: 1 },
      truncated: 0,
    });
  });

  test('resources/read: contents[].text is masked, blobs kept', async () => {
    const res = await call(mask, 'resources/read', { uri: 'file:///notes' });
    expect(res.body.result.contents).toEqual([
      { uri: 'file:///notes', text: 'call [masked:phone]' },
      { uri: 'file:///bin', blob: 'AAAA' },
    ]);
  });

  test('prompts/get: message content (a block or an array of blocks) is masked', async () => {
    const a = await call(mask, 'prompts/get', { name: 'single' });
    expect(a.body.result.messages[0].content.text).toBe('from [masked:ip]');
    const b = await call(mask, 'prompts/get', { name: 'array' });
    expect(b.body.result.messages[0].content[0].text).toBe('key [masked:pem]');
  });

  test('a clean answer reports nothing fired', async () => {
    const res = await call(mask, 'tools/call', { name: 'clean' });
    expect(res.body.result.content[0].text).toBe('nothing to see');
    expect(JSON.parse(res.headers['x-redaction'] as string)).toMatchObject({ mode: 'mask', fired: [] });
  });

  test('warn: the answer is unchanged, the rules that would fire are reported', async () => {
    const res = await call(warn, 'tools/call', { name: 'lookup' });
    expect(res.body.result).toEqual(JSON.parse(JSON.stringify(fixtures.tools.lookup())));
    const rec = JSON.parse(res.headers['x-redaction'] as string);
    expect(rec.mode).toBe('warn');
    expect(rec.fired).toEqual(['jwt', 'email', 'token', 'card', 'ip']);
    expect(rec.hits.token).toBe(2); // warn sees the original text: Bearer <jwt> is also a token
  });

  test('off: unchanged, nothing recorded', async () => {
    const res = await call(off, 'tools/call', { name: 'lookup' });
    expect(res.body.result.content[0].text).toContain('sergey@acme.com');
    expect(JSON.parse(res.headers['x-redaction'] as string)).toEqual({
      mode: 'off',
      fired: [],
      hits: {},
      truncated: 0,
    });
  });

  test('fails closed: a result that cannot be scanned is not sent', async () => {
    const res = await call(mask, 'tools/call', { name: 'getter' });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('structuredContent');
  });

  test("a GET stream gets the transform; DELETE and OPTIONS go on untouched; another method gets methodGuard()'s 405", async () => {
    const seen: Middleware = (req, res) => {
      res.end(
        JSON.stringify({
          outbound: req.locals?.outbound?.length ?? 0,
          redaction: req.locals?.redaction ?? null,
        }),
      );
    };
    const s = serve(platform, [redact(), seen]);
    const get = await request(s).get('/mcp');
    expect(JSON.parse(get.text)).toEqual({
      outbound: 1,
      redaction: { mode: 'mask', fired: [], hits: {}, truncated: 0 },
    });
    const end = await request(s).delete('/mcp');
    expect(JSON.parse(end.text)).toEqual({ outbound: 0, redaction: null });
    const res = await request(s).put('/mcp');
    expect([res.status, res.headers.allow, JSON.parse(res.text)]).toEqual([
      405,
      'POST',
      { jsonrpc: '2.0', error: { code: -32600, message: 'Method not allowed: use POST' } },
    ]);
    const preflight = await request(s).options('/mcp');
    expect(JSON.parse(preflight.text)).toEqual({ outbound: 0, redaction: null });
  });
});

describe('redact() with the real dispatcher', () => {
  const d = () =>
    dispatch({
      anonymous: true,
      handlers: {
        tools: {
          list: () => ({ tools: [{ name: 'who', inputSchema: { type: 'object' } }] }),
          call: (p: Record<string, unknown>) =>
            p.name === 'getter'
              ? {
                  content: [{ type: 'text', text: 'sergey@acme.com' }],
                  get structuredContent(): unknown {
                    throw new Error('boom');
                  },
                }
              : {
                  content: [{ type: 'text', text: 'owner is sergey@acme.com at 10.0.0.7' }],
                  structuredContent: { token: 'api_key=abcdefghijklmnop' },
                },
        },
      },
      serverInfo: { name: 't', version: '1' },
      logger: { error() {} },
    });

  test.each(PLATFORMS)('%s: a tool result leaves masked', async (platform) => {
    const s = serve(platform, [redact(), d()]);
    const res = await call(s, 'tools/call', { name: 'who', arguments: {} });
    expect(res.status).toBe(200);
    expect(res.body.result.content[0].text).toBe('owner is s***@acme.com at [masked:ip]');
    expect(res.body.result.structuredContent).toEqual({ token: 'api_key=[masked:token]' });
  });

  test.each(PLATFORMS)(
    '%s: a result that cannot be scanned becomes an error, nothing of it leaves',
    async (platform) => {
      const s = serve(platform, [redact(), d()]);
      const res = await call(s, 'tools/call', { name: 'getter', arguments: {} });
      expect(res.body.error?.code).toBe(-32603);
      expect(res.text).not.toContain('sergey');
    },
  );
});

describe('redact() with the real dispatcher: streamed notifications', () => {
  test.each(PLATFORMS)(
    '%s: log and progress notifications and the final result leave masked',
    async (platform) => {
      const d = dispatch({
        anonymous: true,
        handlers: {
          tools: {
            list: () => ({ tools: [{ name: 'slow', inputSchema: { type: 'object' } }] }),
            call: async (_p: Record<string, unknown>, ctx: CallContext) => {
              ctx.log?.('info', { who: 'sergey@acme.com', note: 'password: hunter2hunter2hunter2' });
              ctx.progress?.(1, 2, 'reached 10.0.0.1');
              await new Promise((r) => setTimeout(r, 10));
              return { content: [{ type: 'text', text: 'done for b@y.org' }] };
            },
          },
        },
        serverInfo: { name: 't', version: '1' },
        logger: { error() {} },
      });
      const s = serve(platform, [redact(), d]);
      const body = modern('tools/call', {
        name: 'slow',
        arguments: {},
        _meta: { progressToken: 'p1', 'io.modelcontextprotocol/logLevel': 'debug' },
      });
      const res = await request(s).post('/mcp').set(modernHeaders('tools/call', 'slow')).send(body);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/event-stream/);
      expect(res.text).toContain('s***@acme.com');
      expect(res.text).toContain('password: [masked:token]');
      expect(res.text).toContain('reached [masked:ip]');
      expect(res.text).toContain('done for b***@y.org');
      expect(res.text).not.toMatch(/sergey|hunter2|10\.0\.0\.1|b@y\.org/);
    },
  );
});

describe('maskOutbound: notifications', () => {
  const c = compileRedactor({});
  if (!c.ok) throw new Error('compile');
  const r = c.redactor;

  test('notifications/message data (whole message or params) and progress message are masked', () => {
    const t = newTally();
    const msg = {
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: { who: 'sergey@acme.com' } },
    };
    expect(maskOutbound(msg, { method: 'tools/call', kind: 'notification' }, r, t)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'info', data: { who: 's***@acme.com' } },
    });
    expect(
      maskOutbound(
        { progressToken: 1, progress: 1, message: 'at 10.0.0.1' },
        { method: 'tools/call', kind: 'notification' },
        r,
        t,
      ),
    ).toEqual({
      progressToken: 1,
      progress: 1,
      message: 'at [masked:ip]',
    });
    expect(t.hits).toMatchObject({ email: 1, ip: 1 });
  });

  test('other methods and shapes pass as is (same reference)', () => {
    const t = newTally();
    const v = { tools: [{ name: 'x', description: 'mail sergey@acme.com' }] };
    expect(maskOutbound(v, { method: 'tools/list', kind: 'result' }, r, t)).toBe(v);
    expect(maskOutbound('text', { method: 'tools/call', kind: 'result' }, r, t)).toBe('text');
    expect(t.hits.email).toBe(0);
  });
});

describe('redact() options', () => {
  test.each([
    [{ mode: 'masc' }, /redact: option "mode" must be one of "off", "warn", "mask", got "masc"/],
    [{ mode: '' }, /option "mode"/],
    [{ rules: ['e-mail'] }, /redact: option "rules" must be an array of rule names .*got "e-mail"/],
    [{ maxLength: -1 }, /option "maxLength" must be a positive integer/],
    [{ maskEmailDomain: 1 }, /option "maskEmailDomain" must be a boolean/],
    [{ onFired: 'x' }, /option "onFired" must be a function/],
    [{ mdoe: 'mask' }, /unknown option "mdoe"/],
  ])('%j throws', (opts, message) => {
    expect(() => redact(opts as never)).toThrow(TypeError);
    expect(() => redact(opts as never)).toThrow(message);
  });

  test('an operator-typed mode is accepted (" MASK ", "redact") and the redactor is exposed', () => {
    expect(redact({ mode: ' MASK ' as never }).redactor.mode).toBe('mask');
    expect(redact({ mode: 'redact' as never }).redactor.mode).toBe('mask');
    expect(redact().redactor.mode).toBe('mask');
  });

  test('onFired hears each value in which rules fired; a throwing observer does not change the answer', async () => {
    const heard: unknown[] = [];
    const s1 = serve('node:http', [
      parse(),
      redact({ onFired: (fired, hits, info) => heard.push({ fired, hits, info }) }),
      finalHandler(fixtures),
    ]);
    await call(s1, 'resources/read', { uri: 'file:///notes' });
    await call(s1, 'tools/call', { name: 'clean' });
    expect(heard).toEqual([{ fired: ['phone'], hits: { phone: 1 }, info: { method: 'resources/read' } }]);
    const s2 = serve('node:http', [
      parse(),
      redact({
        onFired: () => {
          throw new Error('observer');
        },
      }),
      finalHandler(fixtures),
    ]);
    const res = await call(s2, 'resources/read', { uri: 'file:///notes' });
    expect(res.body.result.contents[0].text).toBe('call [masked:phone]');
  });

  test('called directly on bare node:http objects, it only registers a transform', () => {
    const req = { method: 'POST', headers: {} } as unknown as IncomingMessage;
    let called = false;
    redact()(req, {} as ServerResponse, () => {
      called = true;
    });
    expect(called).toBe(true);
    expect(req.locals?.outbound).toHaveLength(1);
  });
});

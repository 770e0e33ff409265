/**
 * Misuse fails closed. In a hand-built stack with authentication mounted after dispatch(), a caller with no key
 * is refused (500 / -32603 `no_auth_decision`, one logged error naming the problem), never served the demo's
 * customer data; `dispatch({ anonymous: true })` is how a server says it wants no authentication, and
 * mcpEndpoint() keeps working with auth configured and with `auth.insecureNoAuth`. A middleware mounted after
 * dispatch() logs its misorder once per instance (not per request) and goes on.
 */
import { apiKeyAuth, hashKey } from '../../../middleware/api-key-auth/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { mcpEndpoint } from '../../../middleware/endpoint/index';
import { redact } from '../../../middleware/redact/index';
import { demoTools } from '../../../examples/demo';
import { PLATFORMS, type Stack, memoryLogger, stack } from '../../support/dispatch-harness';

const KEY = 'mount-order-key-0123456789abcdef';
const SI = { name: 'mount-order', version: '1' };
const keys = [{ userId: 'ci', hash: hashKey(KEY), groups: ['users'] }];
const quiet = { error() {}, warn() {} };

describe.each(PLATFORMS)('mount order on %s', (platform) => {
  describe('apiKeyAuth() mounted after dispatch()', () => {
    let s: Stack;
    const logger = memoryLogger();
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({ handlers: { tools: demoTools() }, serverInfo: SI, logger }),
        apiKeyAuth({ keys, logger: quiet }),
      ]);
    });
    afterAll(() => s.close());

    test('a caller with no key is refused, not served the customer record; the problem is logged once', async () => {
      const c = s.client({ era: 'legacy' });
      for (const id of ['c-1', 'c-2']) {
        const res = await c.callTool('customer', { id });
        expect(res.status).toBe(500);
        expect(res.body.error).toMatchObject({ code: -32603 });
        expect(JSON.stringify(res.body)).not.toMatch(/@|email/i);
      }
      const modern = await s.client().listTools();
      expect(modern.status).toBe(500);
      const told = logger.lines.filter((l) => /no authentication decision/.test(l.message));
      expect(told).toHaveLength(1);
      expect(told[0]!.level).toBe('error');
      expect(told[0]!.message).toMatch(/anonymous: true/);
    });
  });

  describe('dispatch({ anonymous: true }): a server that wants no authentication', () => {
    let s: Stack;
    beforeAll(async () => {
      s = await stack(platform, [
        dispatch({ handlers: { tools: demoTools() }, serverInfo: SI, anonymous: true, logger: quiet }),
      ]);
    });
    afterAll(() => s.close());
    test('serves every request', async () => {
      const res = await s.client().listTools();
      expect(res.status).toBe(200);
      expect(res.body.result.tools.length).toBeGreaterThan(0);
    });
  });

  describe('redact() mounted after dispatch()', () => {
    let s: Stack;
    // redact() has no logger option: what it says goes to stderr, read here.
    const lines: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    beforeAll(async () => {
      process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        lines.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof process.stderr.write;
      s = await stack(platform, [
        apiKeyAuth({ keys, logger: quiet }),
        dispatch({ handlers: { tools: demoTools() }, serverInfo: SI, logger: quiet }),
        redact(),
      ]);
    });
    afterAll(async () => {
      process.stderr.write = write;
      await s.close();
    });

    test('its misorder is logged once, naming it, whatever the number of requests', async () => {
      const c = s.client({ era: 'legacy', headers: { Authorization: `Bearer ${KEY}` } });
      expect((await c.callTool('customer', { id: 'c-1' })).status).toBe(200);
      // dispatch() passes OPTIONS on: redact() sees them, after dispatch().
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${s.base}/mcp`, {
          method: 'OPTIONS',
          headers: { Authorization: `Bearer ${KEY}` },
        });
        await res.arrayBuffer();
      }
      const told = lines.filter((l) => /mounted after dispatch\(\)/.test(l));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/^\[mcpware\] redact: /);
    });
  });

  describe('mcpEndpoint()', () => {
    test('with auth configured: a key is served, no key is 401', async () => {
      const endpoint = mcpEndpoint({
        auth: { apiKeys: keys },
        handlers: { tools: demoTools() },
        dispatch: { serverInfo: SI },
        logger: quiet,
      });
      const s = await stack(platform, [endpoint]);
      try {
        expect((await s.client({ headers: { Authorization: `Bearer ${KEY}` } }).listTools()).status).toBe(
          200,
        );
        expect((await s.client().listTools()).status).toBe(401);
      } finally {
        await s.close();
      }
    });

    test('with auth.insecureNoAuth: every request is served', async () => {
      const endpoint = mcpEndpoint({
        auth: { insecureNoAuth: true },
        handlers: { tools: demoTools() },
        dispatch: { serverInfo: SI },
        logger: quiet,
      });
      const s = await stack(platform, [endpoint]);
      try {
        expect((await s.client().listTools()).status).toBe(200);
      } finally {
        await s.close();
      }
    });
  });
});

describe('the anonymous option', () => {
  test('is a boolean; mcpEndpoint() takes it as auth.insecureNoAuth', () => {
    expect(() => dispatch({ handlers: {}, serverInfo: SI, anonymous: 'yes' as never })).toThrow(
      /^dispatch: option "anonymous" must be true or false/,
    );
    expect(() =>
      mcpEndpoint({
        auth: { apiKeys: keys },
        handlers: {},
        dispatch: { serverInfo: SI, anonymous: true } as never,
        logger: quiet,
      }),
    ).toThrow(/dispatch\."anonymous" belongs at auth\.insecureNoAuth/);
  });
});

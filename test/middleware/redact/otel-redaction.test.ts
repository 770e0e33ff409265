/**
 * redact() under a request trace (core/trace.ts), over HTTP with the real dispatcher: the `mcpware.redaction`
 * event (count and rules) when the request's answer had redactions, once, with the notifications sent before it;
 * none when nothing fired or without a trace; and `req.locals[TRACE_REDACTOR]`, which masks a copy of a value
 * with the middleware's rules (in warn mode too), absent in off mode and without a trace.
 */
import { dispatch } from '../../../middleware/dispatch/index';
import { type RedactMiddlewareOptions, redact } from '../../../middleware/redact/index';
import type { CallContext } from '../../../core/contract';
import { TRACE_REDACTOR, type TraceRedactor } from '../../../core/trace';
import type { Middleware } from '../../../core/types';
import { type Stack, stack } from '../../support/dispatch-harness';
import { type HandTracing, handTracing } from '../../support/otel-hand-trace';

const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.' +
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const ARGS = { to: 'alice@example.com', nested: { token: JWT, n: 3 } };

/** What each call saw of the trace redactor, by tool. */
const redactors: { tool: string; redactor: TraceRedactor | undefined }[] = [];

const tools = {
  list: () => ({
    tools: ['secret', 'clean', 'chatty', 'redactor'].map((name) => ({ name, inputSchema: {} })),
  }),
  call: async (p: Record<string, unknown>, ctx: CallContext) => {
    switch (p.name) {
      case 'secret':
        return {
          content: [{ type: 'text', text: `mail alice@example.com and bob@example.com, key ${JWT}` }],
        };
      case 'chatty':
        ctx.log?.('info', { who: 'carol@example.com' });
        await new Promise((r) => setImmediate(r));
        return { content: [{ type: 'text', text: 'token ' + JWT }] };
      case 'redactor':
        redactors.push({ tool: String(p.name), redactor: ctx.locals[TRACE_REDACTOR] });
        return { content: [] };
      default:
        return { content: [{ type: 'text', text: 'nothing to see' }] };
    }
  },
};

let tracing: HandTracing;
beforeAll(() => {
  tracing = handTracing();
});
afterAll(() => tracing.close());

async function withStack<T>(
  mws: Middleware[],
  fn: (s: Stack) => Promise<T>,
  options: RedactMiddlewareOptions = {},
): Promise<T> {
  const s = await stack('node:http', [
    ...mws,
    redact(options),
    dispatch({ anonymous: true, handlers: { tools }, serverInfo: { name: 'r', version: '1' } }),
  ]);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

const called = new WeakMap<object, string>();
function hasTool(l: { req: object }, tool: string): boolean {
  return called.get(l.req) === tool;
}
/** The events of the last traced request that called `tool`. */
function eventsOf(tool: string): { name: string; attributes: unknown }[] {
  return tracing.logs.filter((l) => hasTool(l, tool)).at(-1)?.events ?? [];
}
/** Remembers which tool each traced request called. */
const marker: Middleware = (req, _res, next) => {
  const name = req.headers['mcp-name'];
  if (typeof name === 'string') called.set(req, name);
  next();
};

describe('redact() under a request trace: the mcpware.redaction event', () => {
  test('an answer with redactions: one event with the count and the rules in rule order', async () => {
    await withStack([tracing.middleware, marker], async (s) => {
      const r = await s.client().callTool('secret');
      expect(r.status).toBe(200);
      expect(r.text).not.toContain('alice@example.com');
    });
    expect(eventsOf('secret')).toEqual([
      { name: 'mcpware.redaction', attributes: { count: 3, rules: 'jwt,email' } },
    ]);
  });

  test('a notification masked before the answer counts in the one event at the answer', async () => {
    await withStack([tracing.middleware, marker], async (s) => {
      const r = await s
        .client()
        .callTool('chatty', {}, { meta: { 'io.modelcontextprotocol/logLevel': 'debug' } });
      expect(r.status).toBe(200);
      expect(r.text).not.toContain('carol@example.com');
    });
    expect(eventsOf('chatty')).toEqual([
      { name: 'mcpware.redaction', attributes: { count: 2, rules: 'jwt,email' } },
    ]);
  });

  test('warn mode: the event says what fired, the answer is left as it was', async () => {
    await withStack(
      [tracing.middleware, marker],
      async (s) => {
        const r = await s.client().callTool('secret');
        expect(r.text).toContain('alice@example.com');
      },
      { mode: 'warn' },
    );
    expect(eventsOf('secret')).toEqual([
      { name: 'mcpware.redaction', attributes: { count: 3, rules: 'jwt,email' } },
    ]);
  });

  test('nothing fired: no event', async () => {
    await withStack([tracing.middleware, marker], async (s) => {
      expect((await s.client().callTool('clean')).status).toBe(200);
    });
    expect(tracing.logs.some((l) => hasTool(l, 'clean'))).toBe(true);
    expect(eventsOf('clean')).toEqual([]);
  });
});

describe('redact() under a request trace: the trace redactor', () => {
  test.each([['mask'], ['warn']] as const)(
    '%s mode: it masks a copy of a value with the rules, leaving the value as it was',
    async (mode) => {
      redactors.length = 0;
      await withStack([tracing.middleware], (s) => s.client().callTool('redactor'), { mode });
      const fn = redactors[0]!.redactor!;
      expect(typeof fn).toBe('function');
      const input = structuredClone(ARGS);
      const out = fn(input);
      expect(JSON.stringify(out)).not.toMatch(/alice@example\.com|eyJhbGci/);
      expect(out).toMatchObject({ nested: { n: 3 } });
      expect(input).toEqual(ARGS);
    },
  );

  test("rules narrowed: only the middleware's rules are applied", async () => {
    redactors.length = 0;
    await withStack([tracing.middleware], (s) => s.client().callTool('redactor'), { rules: ['email'] });
    const out = JSON.stringify(redactors[0]!.redactor!(ARGS));
    expect(out).not.toContain('alice@example.com');
    expect(out).toContain(JWT);
  });

  test('off mode, and any request without a trace: no redactor (otel() captures nothing)', async () => {
    redactors.length = 0;
    await withStack([tracing.middleware], (s) => s.client().callTool('redactor'), { mode: 'off' });
    await withStack([], (s) => s.client().callTool('redactor'));
    expect(redactors.map((r) => r.redactor)).toEqual([undefined, undefined]);
  });
});

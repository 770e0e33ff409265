/**
 * close({deadlineMs}): the graceful end a replica behind a load balancer needs. The readiness handler answers
 * 503 at once, new requests get 503 with Retry-After, listen streams get their completion result, the calls in
 * flight finish (a legacy call's posted input answer still reaches it), and close() resolves when they have;
 * past the deadline the calls still running are cancelled and answered 503. Bare node:http and Express 5.
 */
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express from 'express';
import { type DispatchMiddleware, dispatch } from '../../../middleware/dispatch/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { CallContext } from '../../../core/contract';
import { elicitationRequest } from '../../../lib/mrtr';
import { PLATFORMS, type Platform, chain, close, listen } from '../../support/dispatch-harness';
import {
  deferred,
  envelope,
  legacyHeaders,
  modernHeaders,
  openStream,
  post,
  until,
} from '../../support/streaming';

const SI = { name: 'drain', version: '1' };
const SUB = 'io.modelcontextprotocol/subscriptionId';

interface Fixture {
  mcp: DispatchMiddleware;
  server: Server;
  url: string;
  ready: string;
  /** Resolves the `wait` tool's call. */
  release(): void;
  /** How many calls of `wait` have started. */
  started(): number;
  /** Whether the `stuck` tool's signal fired. */
  stuckAborted(): boolean;
}

async function setup(platform: Platform): Promise<Fixture> {
  let gate = deferred();
  let started = 0;
  let aborted = false;
  const tools = new ToolRegistry({
    tools: [
      { name: 'quick', call: () => textResult('quick') },
      {
        name: 'wait',
        call: async () => {
          started++;
          await gate.promise;
          return textResult('done');
        },
      },
      {
        name: 'stuck',
        call: async (_args, ctx: CallContext) => {
          ctx.progress?.(1, 2); // sent only when the request carries a progressToken
          await new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
          aborted = true;
          return textResult('too late');
        },
      },
      {
        name: 'ask',
        call: (_args, ctx: CallContext) => {
          const answer = ctx.inputResponses?.who;
          if (answer === undefined) {
            return ctx.inputRequired!({
              inputRequests: { who: elicitationRequest('Who?', { type: 'object' }) },
            });
          }
          return textResult(`answered ${JSON.stringify(answer.content)}`);
        },
      },
    ],
  });
  const mcp = dispatch({
    anonymous: true,
    handlers: { tools },
    serverInfo: SI,
    streams: { keepAliveMs: 0 },
    logger: { error() {} },
  });
  let server: Server;
  if (platform === 'node:http') {
    const mcpChain = chain([mcp]);
    server = http.createServer((req: IncomingMessage, res: ServerResponse) =>
      req.url === '/ready' ? mcp.readiness(req, res) : mcpChain(req, res),
    );
  } else {
    const app = express();
    app.get('/ready', mcp.readiness);
    app.use('/mcp', mcp);
    server = http.createServer(app);
  }
  const base = await listen(server);
  return {
    mcp,
    server,
    url: `${base}/mcp`,
    ready: `${base}/ready`,
    release: () => {
      gate.resolve();
      gate = deferred();
    },
    started: () => started,
    stuckAborted: () => aborted,
  };
}

const call = (id: number, name: string, meta: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {}, _meta: { ...envelope({ elicitation: {} }), ...meta } },
});

async function readiness(url: string): Promise<{ status: number; body: unknown; cache?: string }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json(), cache: r.headers.get('cache-control') ?? undefined };
}

describe.each(PLATFORMS)('close({deadlineMs}) on %s', (platform) => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await setup(platform);
  });
  afterEach(async () => {
    fx.release();
    await close(fx.server);
  });

  test('draining: readiness 503 at once, new requests 503 with Retry-After, the call in flight finishes first', async () => {
    const { mcp, url } = fx;
    expect(await readiness(fx.ready)).toEqual({ status: 200, body: { status: 'ready' }, cache: 'no-store' });
    const sub = await openStream(
      url,
      {
        jsonrpc: '2.0',
        id: 'sub',
        method: 'subscriptions/listen',
        params: { notifications: {}, _meta: envelope() },
      },
      modernHeaders('subscriptions/listen'),
    );
    await sub.next();
    const inFlight = openStream(url, call(1, 'wait'), modernHeaders('tools/call', 'wait'));
    await until(() => fx.started() === 1, 'the call to start');
    expect(mcp.stats()).toMatchObject({ inFlight: 1, draining: false, listenStreams: 1 });

    let closed = false;
    const closing = mcp.close({ deadlineMs: 60_000 }).then(() => (closed = true));
    expect(mcp.stats().draining).toBe(true);
    expect(await readiness(fx.ready)).toEqual({
      status: 503,
      body: { status: 'draining' },
      cache: 'no-store',
    });
    expect(await sub.next()).toMatchObject({ id: 'sub', result: { _meta: { [SUB]: 'sub' } } });
    await sub.ended;

    const refused = await post(url, call(2, 'quick'), modernHeaders('tools/call', 'quick'));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: 503, message: 'The server is shutting down; retry the request' },
    });
    const listenLater = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'subscriptions/listen',
        params: { notifications: {}, _meta: envelope() },
      },
      modernHeaders('subscriptions/listen'),
    );
    expect(listenLater.status).toBe(503);
    // A notification is no new work: still acknowledged.
    const note = await post(
      url,
      { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: envelope() } },
      modernHeaders('notifications/initialized'),
    );
    expect(note.status).toBe(202);

    expect(closed).toBe(false);
    expect(mcp.stats().inFlight).toBe(1);
    fx.release();
    const answer = await inFlight;
    expect(await answer.next()).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
    await closing;
    expect(mcp.stats()).toMatchObject({ inFlight: 0, draining: true, listenStreams: 0 });
  });

  test('past the deadline a call still running is cancelled and answered 503 with Retry-After', async () => {
    const { mcp, url } = fx;
    const stuck = openStream(url, call(4, 'stuck'), modernHeaders('tools/call', 'stuck'));
    await until(() => mcp.stats().inFlight === 1, 'the call to start');
    await mcp.close({ deadlineMs: 20 });
    const st = await stuck;
    expect(st.status).toBe(503);
    expect(st.headers['retry-after']).toBe('1');
    expect(await st.next()).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: 503, message: 'The server shut down before the call finished; retry it' },
    });
    await until(() => fx.stuckAborted(), 'the handler to see its signal fire');
    expect(mcp.stats().inFlight).toBe(0);
  });

  test('past the deadline a streamed call gets the 503 error as its last event', async () => {
    const { mcp, url } = fx;
    const st = await openStream(
      url,
      call(5, 'stuck', { progressToken: 'p' }),
      modernHeaders('tools/call', 'stuck'),
    );
    expect(await st.next()).toMatchObject({ method: 'notifications/progress' });
    await mcp.close({ deadlineMs: 20 });
    expect(await st.next()).toMatchObject({ id: 5, error: { code: 503 } });
    await st.ended;
  });

  test('legacy: a call awaiting client input during the drain gets the answer posted to it and finishes', async () => {
    const { mcp, url } = fx;
    // A session that declared elicitation: a legacy client is sent only the requests it negotiated.
    const init = await post(
      url,
      {
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { elicitation: {} },
          clientInfo: { name: 't', version: '1' },
        },
      },
      legacyHeaders(),
    );
    const session = { 'Mcp-Session-Id': String(init.headers['mcp-session-id']) };
    const st = await openStream(
      url,
      { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'ask', arguments: {} } },
      { ...legacyHeaders(), ...session },
    );
    const ask = await st.next();
    expect(ask).toMatchObject({ method: 'elicitation/create' });
    const closing = mcp.close({ deadlineMs: 60_000 });
    const delivered = await post(
      url,
      { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { who: 'me' } } },
      { ...legacyHeaders(), ...session },
    );
    expect(delivered.status).toBe(202);
    expect(await st.next()).toMatchObject({
      id: 6,
      result: { content: [{ text: 'answered {"who":"me"}' }] },
    });
    await closing;
    expect(mcp.stats().pendingInputs).toBe(0);
  });

  test('close() with nothing in flight resolves at once; a second close() is the same drain', async () => {
    const { mcp } = fx;
    await mcp.close({ deadlineMs: 3_600_000 });
    await mcp.close();
    expect(mcp.stats()).toMatchObject({ draining: true, inFlight: 0 });
  });
});

describe('close() options', () => {
  test.each([
    [{ deadlineMs: -1 }, /deadlineMs/],
    [{ deadlineMs: 1.5 }, /deadlineMs/],
    [{ deadlineMs: '10' }, /deadlineMs/],
    [{ deadline: 10 }, /deadlineMs/],
    ['soon', /options/],
  ])('%p is refused with a TypeError and starts no drain', async (options, message) => {
    const mcp = dispatch({ anonymous: true, handlers: { tools: new ToolRegistry() }, serverInfo: SI });
    await expect(mcp.close(options as never)).rejects.toThrow(TypeError);
    await expect(mcp.close(options as never)).rejects.toThrow(message);
    expect(mcp.stats().draining).toBe(false);
  });
});

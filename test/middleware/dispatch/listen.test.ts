/**
 * subscriptions/listen: the acknowledgement comes first with the honoured subset, every notification carries
 * the subscription id, only requested types are sent, list changes and resource updates flow from the change
 * feeds, the client closing the stream unsubscribes, and close() ends each stream with its completion result.
 * Bare node:http and Express 5.
 */
import { ChangeFeed } from '../../../handlers/changes/index';
import { type DispatchMiddleware, type DispatchOptions, dispatch } from '../../../middleware/dispatch/index';
import { prompts } from '../../../handlers/prompts/index';
import { memoryResources, resources } from '../../../handlers/resources/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import type { Middleware, RequestLocals } from '../../../core/types';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';
import {
  type Stream,
  envelope,
  legacyHeaders,
  modernHeaders,
  openStream,
  post,
  until,
} from '../../support/streaming';

const SI = { name: 'listen', version: '1' };
const SUB = 'io.modelcontextprotocol/subscriptionId';

function listen(id: number | string, notifications: unknown) {
  return { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: envelope() } };
}

const tool = (name: string) => ({ name, description: name, call: () => textResult(name) });

describe.each(PLATFORMS)('subscriptions/listen on %s', (platform) => {
  let s: Stack;
  let url: string;
  let mcp: DispatchMiddleware;
  const tools = new ToolRegistry({ tools: [tool('base')] });
  const promptFeed = new ChangeFeed();
  const resourceFeed = new ChangeFeed();
  const open: Stream[] = [];

  beforeAll(async () => {
    mcp = dispatch({
      anonymous: true,
      handlers: {
        tools,
        prompts: prompts({ prompts: [{ name: 'p', template: 'x' }], changes: promptFeed }),
        resources: resources({
          sources: [memoryResources([{ uri: 'mem://a', name: 'a', text: 'a' }])],
          changes: resourceFeed,
        }),
      },
      serverInfo: SI,
      streams: { keepAliveMs: 5, maxListenStreams: 3 },
    });
    s = await stack(platform, [mcp]);
    url = `${s.base}/mcp`;
  });
  afterEach(async () => {
    for (const st of open.splice(0)) st.close();
    await until(() => mcp.stats().listenStreams === 0, 'every listen stream to be gone');
  });
  afterAll(() => s.close());

  async function start(id: number | string, filter: unknown): Promise<Stream> {
    const st = await openStream(url, listen(id, filter), modernHeaders('subscriptions/listen'));
    open.push(st);
    return st;
  }

  test('the capabilities declare what the feeds support', async () => {
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
      modernHeaders('server/discover'),
    );
    expect((r.messages[0]!.result as Record<string, unknown>).capabilities).toEqual({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
    });
  });

  test('acknowledgement first, with the honoured subset and the subscription id; unknown types dropped', async () => {
    const st = await start('sub-1', {
      toolsListChanged: true,
      promptsListChanged: false,
      resourceSubscriptions: ['mem://a', 42, 'mem://a'],
      somethingElse: true,
    });
    expect(st.status).toBe(200);
    expect(st.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(st.headers['x-accel-buffering']).toBe('no');
    expect(await st.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { toolsListChanged: true, resourceSubscriptions: ['mem://a'] },
        _meta: { [SUB]: 'sub-1' },
      },
    });
  });

  test('only requested types are sent, each tagged with the subscription id', async () => {
    const st = await start(7, { promptsListChanged: true, resourceSubscriptions: ['mem://a'] });
    expect((await st.next()).method).toBe('notifications/subscriptions/acknowledged');
    // Not requested: tool list changes and resource list changes, and updates of other URIs.
    tools.register(tool('t1'));
    resourceFeed.listChanged();
    resourceFeed.updated('mem://other');
    // Requested:
    resourceFeed.updated('mem://a');
    promptFeed.listChanged();
    const a = await st.next();
    const b = await st.next();
    expect([a, b]).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/resources/updated',
        params: { uri: 'mem://a', _meta: { [SUB]: 7 } },
      },
      { jsonrpc: '2.0', method: 'notifications/prompts/list_changed', params: { _meta: { [SUB]: 7 } } },
    ]);
    tools.remove('t1');
  });

  test('a burst of changes is one list_changed; the registry announces register and remove', async () => {
    const st = await start(8, { toolsListChanged: true, resourcesListChanged: true });
    await st.next();
    tools.register(tool('b1'));
    tools.register(tool('b2'));
    tools.remove('b1');
    // A different type queued after the burst: had the burst produced more than one event, it would show first.
    await new Promise((r) => setImmediate(r));
    resourceFeed.listChanged();
    expect((await st.next()).method).toBe('notifications/tools/list_changed');
    expect((await st.next()).method).toBe('notifications/resources/list_changed');
    tools.remove('b2');
    expect((await st.next()).method).toBe('notifications/tools/list_changed');
  });

  test('keep-alive comments flow on an idle stream', async () => {
    const st = await start(9, {});
    await st.next();
    await until(() => st.text().includes(': keep-alive\n\n'), 'a keep-alive comment');
  });

  test('the client closing the stream unsubscribes it', async () => {
    const before = tools.changes.listeners;
    const st = await start(10, { toolsListChanged: true });
    await st.next();
    expect(tools.changes.listeners).toBe(before + 1);
    expect(mcp.stats().listenStreams).toBe(1);
    st.close();
    await until(() => mcp.stats().listenStreams === 0, 'the stream to be forgotten');
    expect(tools.changes.listeners).toBe(before);
  });

  test('too many streams → 503; a client that does not accept SSE → 400; a bad filter → -32602', async () => {
    for (let i = 0; i < 3; i++) await (await start(100 + i, {})).next();
    const full = await post(url, listen(200, {}), modernHeaders('subscriptions/listen'));
    expect(full.status).toBe(503);
    expect(full.messages[0]).toMatchObject({ id: 200, error: { code: 503 } });
    for (const st of open.splice(0)) st.close();
    await until(() => mcp.stats().listenStreams === 0, 'the streams to close');

    const jsonOnly = await post(url, listen(201, {}), {
      ...modernHeaders('subscriptions/listen'),
      Accept: 'application/json',
    });
    expect(jsonOnly.status).toBe(400);
    expect(jsonOnly.messages[0]).toMatchObject({ id: 201, error: { code: -32600 } });
    const bad = await post(url, listen(202, ['toolsListChanged']), modernHeaders('subscriptions/listen'));
    expect(bad.messages[0]).toMatchObject({ id: 202, error: { code: -32602 } });
  });

  test('legacy clients have no subscriptions/listen', async () => {
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 11, method: 'subscriptions/listen', params: { notifications: {} } },
      legacyHeaders(),
    );
    expect(r.status).toBe(200);
    expect(r.messages[0]).toMatchObject({ id: 11, error: { code: -32601 } });
  });
});

describe('close(): graceful end', () => {
  test('each stream gets its completion result and ends; new listens are refused', async () => {
    const tools = new ToolRegistry({ tools: [tool('x')] });
    const mcp = dispatch({
      anonymous: true,
      handlers: { tools },
      serverInfo: SI,
      streams: { keepAliveMs: 0 },
    });
    const s = await stack('node:http', [mcp]);
    try {
      const url = `${s.base}/mcp`;
      const a = await openStream(
        url,
        listen('a', { toolsListChanged: true }),
        modernHeaders('subscriptions/listen'),
      );
      const b = await openStream(url, listen(2, {}), modernHeaders('subscriptions/listen'));
      await a.next();
      await b.next();
      await mcp.close();
      expect(await a.next()).toEqual({
        jsonrpc: '2.0',
        id: 'a',
        result: { resultType: 'complete', _meta: { [SUB]: 'a', 'io.modelcontextprotocol/serverInfo': SI } },
      });
      await a.ended;
      expect((await b.next()).id).toBe(2);
      await b.ended;
      expect(tools.changes.listeners).toBe(0);
      const later = await post(url, listen(3, {}), modernHeaders('subscriptions/listen'));
      expect(later.status).toBe(503);
    } finally {
      await s.close();
    }
  });
});

describe('what a listen stream leaves on req.locals', () => {
  test('recorded as a stream, and nothing charged to the caller budget for its lifetime', async () => {
    const seen: RequestLocals[] = [];
    const capture: Middleware = (req, res, next) => {
      res.on('close', () => seen.push({ ...(req.locals ?? {}) }));
      next();
    };
    const mcp = dispatch({ anonymous: true, handlers: { tools: new ToolRegistry() }, serverInfo: SI });
    const s = await stack('node:http', [capture, mcp]);
    try {
      const st = await openStream(`${s.base}/mcp`, listen(1, {}), modernHeaders('subscriptions/listen'));
      await st.next();
      st.close();
      await until(() => seen.length === 1, 'the close');
      expect(seen[0]!.response).toEqual({ resultType: 'stream' });
      expect(seen[0]!.chargedMs).toBe(0);
      expect(seen[0]!.streamed).toBe(1);
    } finally {
      await s.close();
    }
  });
});

describe('an acknowledgement that cannot be sent', () => {
  test('closes the stream: nothing may go out before it', async () => {
    const failing: Middleware = (req, _res, next) => {
      (req.locals ??= {}).outbound = [
        (v) => {
          if ((v as { method?: unknown }).method === 'notifications/subscriptions/acknowledged')
            throw new Error('no');
          return v;
        },
      ];
      next();
    };
    const tools = new ToolRegistry();
    const mcp = dispatch({ anonymous: true, handlers: { tools }, serverInfo: SI, logger: { error() {} } });
    const s = await stack('node:http', [failing, mcp]);
    try {
      // The acknowledgement is the first thing written: without it the connection closes before any answer.
      const opening = openStream(
        `${s.base}/mcp`,
        listen(1, { toolsListChanged: true }),
        modernHeaders('subscriptions/listen'),
      );
      tools.register(tool('later'));
      await expect(opening).rejects.toThrow(/socket hang up/);
      await until(() => mcp.stats().listenStreams === 0, 'the stream to be forgotten');
      expect(tools.changes.listeners).toBe(0);
    } finally {
      await s.close();
    }
  });
});

describe('ChangeFeed', () => {
  test('listeners get events until they unsubscribe; a throwing listener does not stop the others', () => {
    const feed = new ChangeFeed();
    const seen: unknown[] = [];
    const off1 = feed.subscribe(() => {
      throw new Error('boom');
    });
    const off2 = feed.subscribe((e) => seen.push(e));
    feed.listChanged();
    feed.updated('u://1');
    off2();
    feed.listChanged();
    off1();
    expect(seen).toEqual([{ type: 'listChanged' }, { type: 'updated', uri: 'u://1' }]);
    expect(feed.listeners).toBe(0);
    expect(() => feed.updated('')).toThrow(TypeError);
  });
});

describe('capability checks at construction', () => {
  test.each([
    ['tools.listChanged without a feed', { tools: { listChanged: true } }, /capabilities.tools.listChanged/],
    [
      'prompts.listChanged without a feed',
      { prompts: { listChanged: true } },
      /capabilities.prompts.listChanged/,
    ],
    [
      'resources.subscribe without a feed or members',
      { resources: { subscribe: true } },
      /resources.subscribe/,
    ],
  ])('%s → TypeError', (_what, capabilities, message) => {
    const handlers = {
      tools: { list: () => ({ tools: [] }), call: () => ({ content: [] }) },
      prompts: { list: () => ({ prompts: [] }), get: () => ({ messages: [] }) },
      resources: { list: () => ({ resources: [] }), read: () => ({ contents: [] }) },
    };
    expect(() => dispatch({ anonymous: true, handlers, capabilities, serverInfo: SI })).toThrow(message);
  });

  test('new options are validated', () => {
    const handlers = { tools: new ToolRegistry() };
    expect(() =>
      dispatch({ anonymous: true, handlers, serverInfo: SI, legacyLogLevel: 'loud' as never }),
    ).toThrow(/legacyLogLevel/);
    const make = (o: Partial<DispatchOptions>) => () =>
      dispatch({ anonymous: true, handlers, serverInfo: SI, ...o });
    expect(make({ streams: { keepAliveMs: -1 } })).toThrow(/"streams.keepAliveMs"/);
    expect(make({ streams: { maxListenStreams: 1.5 } })).toThrow(/"streams.maxListenStreams"/);
    expect(make({ inputRequests: { requestStateTtlMs: 0 } })).toThrow(/"inputRequests.requestStateTtlMs"/);
    expect(make({ inputRequests: { requestStateKey: 'short' } })).toThrow(/"inputRequests.requestStateKey"/);
    // The key itself never appears in the message.
    let message = '';
    try {
      dispatch({ anonymous: true, handlers, serverInfo: SI, inputRequests: { requestStateKey: 'sekrit' } });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/requestStateKey.*at least 32 bytes/);
    expect(message).not.toContain('sekrit');
    expect(make({ inputRequests: { requestStateKey: [] } })).toThrow(/inputRequests.requestStateKey/);
    expect(() => prompts({ changes: {} as never })).toThrow(/changes/);
    expect(() => resources({ changes: 'x' as never })).toThrow(/changes/);
  });
});

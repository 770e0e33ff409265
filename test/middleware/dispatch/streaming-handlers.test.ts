/**
 * The services the issue names, through the dispatcher: completion/complete, resource templates (list and read),
 * and legacy resources/subscribe / unsubscribe answered per 2025-11-25 (the subscribe capability). Then the
 * conformance fixture server itself, end to end. Bare node:http and Express 5.
 */
import { startConformanceServer } from '../../../examples/conformance-server';
import { ChangeFeed } from '../../../handlers/changes/index';
import { completion } from '../../../handlers/completion/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { prompts } from '../../../handlers/prompts/index';
import { memoryResources, resources } from '../../../handlers/resources/index';
import { PLATFORMS, type Stack, stack } from '../../support/dispatch-harness';
import { envelope, legacyHeaders, modernHeaders, openStream, post } from '../../support/streaming';

const SI = { name: 'services', version: '1' };

describe.each(PLATFORMS)('completion, templates and legacy subscriptions on %s', (platform) => {
  let s: Stack;
  let plain: Stack;
  let url: string;
  beforeAll(async () => {
    const p = prompts({
      prompts: [
        {
          name: 'city',
          description: 'a city',
          arguments: [{ name: 'name', required: true }],
          template: 'About {{name}}',
          complete: (_arg, value) => ['paris', 'park', 'rome'].filter((v) => v.startsWith(value)),
        },
      ],
    });
    const r = resources({
      sources: [memoryResources([{ uri: 'mem://a', name: 'a', text: 'A' }])],
      templates: [
        {
          uriTemplate: 'weather://{city}/today',
          name: 'weather',
          mimeType: 'application/json',
          read: ({ city }) => ({ text: JSON.stringify({ city, sky: 'clear' }) }),
          complete: (_v, value) => ['oslo', 'osaka'].filter((c) => c.startsWith(value)),
        },
      ],
      changes: new ChangeFeed(),
    });
    s = await stack(platform, [
      dispatch({
        anonymous: true,
        handlers: { prompts: p, resources: r, completion: completion({ prompts: p, resources: r }) },
        serverInfo: SI,
        cache: { 'resources/templates/list': { ttlMs: 60000, cacheScope: 'public' } },
      }),
    ]);
    url = `${s.base}/mcp`;
    // No change feed and no subscribe members: no resources.subscribe capability.
    plain = await stack(platform, [
      dispatch({
        anonymous: true,
        handlers: { resources: resources({ sources: [memoryResources([])] }) },
        serverInfo: SI,
      }),
    ]);
  });
  afterAll(async () => {
    await s.close();
    await plain.close();
  });

  const modern = (id: number, method: string, params: Record<string, unknown>, name?: string) =>
    post(
      url,
      { jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope() } },
      modernHeaders(method, name),
    );
  const legacy = (base: string, id: number, method: string, params: Record<string, unknown>) =>
    post(`${base}/mcp`, { jsonrpc: '2.0', id, method, params }, legacyHeaders());

  test('completion/complete for a prompt argument and a template variable, both eras', async () => {
    const a = await modern(1, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'city' },
      argument: { name: 'name', value: 'pa' },
    });
    expect(a.messages[0]!.result).toEqual({
      resultType: 'complete',
      completion: { values: ['paris', 'park'] },
      _meta: { 'io.modelcontextprotocol/serverInfo': SI },
    });
    const b = await legacy(s.base, 2, 'completion/complete', {
      ref: { type: 'ref/resource', uri: 'weather://{city}/today' },
      argument: { name: 'city', value: 'os' },
    });
    expect(b.messages[0]!.result).toEqual({ completion: { values: ['oslo', 'osaka'] } });
    const unknown = await modern(3, 'completion/complete', {
      ref: { type: 'ref/prompt', name: 'nope' },
      argument: { name: 'x', value: '' },
    });
    expect(unknown.messages[0]!.error).toMatchObject({ code: -32602 });
  });

  test('resources/templates/list carries the configured cache hint; a matching URI reads', async () => {
    const list = await modern(4, 'resources/templates/list', {});
    expect(list.messages[0]!.result).toMatchObject({
      resultType: 'complete',
      resourceTemplates: [
        { uriTemplate: 'weather://{city}/today', name: 'weather', mimeType: 'application/json' },
      ],
      ttlMs: 60000,
      cacheScope: 'public',
    });
    const read = await modern(5, 'resources/read', { uri: 'weather://oslo/today' }, 'weather://oslo/today');
    expect(read.messages[0]!.result).toMatchObject({
      contents: [
        { uri: 'weather://oslo/today', mimeType: 'application/json', text: '{"city":"oslo","sky":"clear"}' },
      ],
    });
    const miss = await modern(
      6,
      'resources/read',
      { uri: 'weather://oslo/tomorrow' },
      'weather://oslo/tomorrow',
    );
    expect(miss.messages[0]!.error).toMatchObject({ code: -32602, data: { uri: 'weather://oslo/tomorrow' } });
  });

  test('legacy resources/subscribe and unsubscribe: {} with the capability, -32602 without a uri', async () => {
    expect((await legacy(s.base, 7, 'resources/subscribe', { uri: 'mem://a' })).messages[0]!.result).toEqual(
      {},
    );
    expect(
      (await legacy(s.base, 8, 'resources/unsubscribe', { uri: 'mem://a' })).messages[0]!.result,
    ).toEqual({});
    expect((await legacy(s.base, 9, 'resources/subscribe', {})).messages[0]!.error).toMatchObject({
      code: -32602,
    });
    // Modern clients subscribe through subscriptions/listen: the RPCs are gone (404 / -32601).
    const m = await modern(10, 'resources/subscribe', { uri: 'mem://a' });
    expect(m.status).toBe(404);
    expect(m.messages[0]!.error).toMatchObject({ code: -32601 });
    // A server without the capability does not answer them (a legacy -32601 travels on 200).
    const none = await legacy(plain.base, 11, 'resources/subscribe', { uri: 'mem://a' });
    expect(none.status).toBe(200);
    expect(none.messages[0]!.error).toMatchObject({ code: -32601 });
  });
});

describe('the conformance fixture server', () => {
  test('discover, a listen stream that sees a tool change, an MRTR round with a tampered state, graceful close', async () => {
    const srv = await startConformanceServer(0);
    try {
      const discover = await post(
        srv.url,
        { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
        modernHeaders('server/discover'),
      );
      expect((discover.messages[0]!.result as Record<string, unknown>).capabilities).toMatchObject({
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
      });
      const st = await openStream(
        srv.url,
        {
          jsonrpc: '2.0',
          id: 'l',
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: envelope() },
        },
        modernHeaders('subscriptions/listen'),
      );
      expect((await st.next()).method).toBe('notifications/subscriptions/acknowledged');
      await post(
        srv.url,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'test_trigger_tool_change', arguments: {}, _meta: envelope() },
        },
        modernHeaders('tools/call', 'test_trigger_tool_change'),
      );
      expect(await st.next()).toMatchObject({
        method: 'notifications/tools/list_changed',
        params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'l' } },
      });

      const name = 'test_input_required_result_tampered_state';
      const caps = { elicitation: {} };
      const r1 = await post(
        srv.url,
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'tools/call',
          params: { name, arguments: {}, _meta: envelope(caps) },
        },
        modernHeaders('tools/call', name),
      );
      const state = String((r1.messages[0]!.result as Record<string, unknown>).requestState);
      const retry = (id: number, requestState: string) =>
        post(
          srv.url,
          {
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: {
              name,
              arguments: {},
              inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
              requestState,
              _meta: envelope(caps),
            },
          },
          modernHeaders('tools/call', name),
        );
      expect((await retry(4, state + '-TAMPERED')).messages[0]!.error).toMatchObject({ code: -32602 });
      expect((await retry(5, state)).messages[0]!.result).toMatchObject({ resultType: 'complete' });

      const closing = srv.close();
      expect(await st.next()).toMatchObject({ id: 'l', result: { resultType: 'complete' } });
      await closing;
    } finally {
      if (srv.server.listening) await srv.close();
    }
  });
});

/**
 * MRTR: input-required results and signed requestState. The pure functions (sign/verify, digest, checks), then
 * the dispatcher: round trips on tools/call, prompts/get and resources/read, tampered/expired/rebound state
 * refused before the handler runs, -32021 for undeclared capabilities, and the legacy era served with real
 * server-to-client requests on the SSE answer. Bare node:http and Express 5.
 */
import fc from 'fast-check';
import type { JsonObject } from '../../../lib/jsonrpc';
import {
  checkInputRequired,
  elicitationRequest,
  listRootsRequest,
  missingCapabilities,
  paramsDigest,
  readInputResponses,
  samplingRequest,
  signRequestState,
  verifyRequestState,
} from '../../../lib/mrtr';
import { type DispatchMiddleware, dispatch } from '../../../middleware/dispatch/index';
import { prompts } from '../../../handlers/prompts/index';
import { resources } from '../../../handlers/resources/index';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { PLATFORMS, type Stack, fakeAuth, stack } from '../../support/dispatch-harness';
import { envelope, legacyHeaders, modernHeaders, openStream, post, until } from '../../support/streaming';

const KEY = Buffer.from('0123456789abcdef0123456789abcdef', 'utf8');

/**
 * Legacy headers with the session of a client that declared elicitation (a legacy request is sent only the
 * server-to-client requests its session negotiated).
 */
async function elicitingHeaders(
  url: string,
  extra: Record<string, string> = {},
  accept?: string,
): Promise<Record<string, string>> {
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
    { ...legacyHeaders(), ...extra },
  );
  const sid = init.headers['mcp-session-id'];
  if (typeof sid !== 'string') throw new Error('no session minted');
  return { ...legacyHeaders(accept), ...extra, 'Mcp-Session-Id': sid };
}
const OTHER = Buffer.from('fedcba9876543210fedcba9876543210', 'utf8');
const BINDING = { principal: 'oidc:alice', method: 'tools/call', digest: paramsDigest({ name: 't' }) };
const NOW = 1_800_000_000_000;

describe('requestState signing (lib)', () => {
  test('round trip: the state comes back; expiry, principal, method and params are bound', () => {
    const token = signRequestState({ step: 2, seen: ['a'] }, BINDING, KEY, NOW + 1000);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(verifyRequestState(token, BINDING, [KEY], NOW)).toEqual({
      ok: true,
      state: { step: 2, seen: ['a'] },
      expiresAt: NOW + 1000,
    });
    const reason = (b: typeof BINDING, now = NOW, keys = [KEY]) => {
      const r = verifyRequestState(token, b, keys, now);
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason(BINDING, NOW + 1000)).toBe('expired');
    expect(reason({ ...BINDING, principal: 'oidc:bob' })).toBe('wrong_principal');
    expect(reason({ ...BINDING, principal: '' })).toBe('wrong_principal');
    expect(reason({ ...BINDING, method: 'prompts/get' })).toBe('wrong_method');
    expect(reason({ ...BINDING, digest: paramsDigest({ name: 'u' }) })).toBe('wrong_params');
    expect(reason(BINDING, NOW, [OTHER])).toBe('bad_signature');
    // Rotation: the old key still verifies while listed.
    expect(reason(BINDING, NOW, [OTHER, KEY])).toBe('ok');
  });

  test('no state: the token carries none', () => {
    const token = signRequestState(undefined, BINDING, KEY, NOW + 1);
    expect(verifyRequestState(token, BINDING, [KEY], NOW)).toEqual({
      ok: true,
      state: undefined,
      expiresAt: NOW + 1,
    });
  });

  test('malformed and oversized tokens', () => {
    const v = (t: unknown) => {
      const r = verifyRequestState(t, BINDING, [KEY], NOW);
      return r.ok ? 'ok' : r.reason;
    };
    expect(v(42)).toBe('malformed');
    expect(v('')).toBe('malformed');
    expect(v('v1.abc')).toBe('malformed');
    expect(v('v2.abc.def')).toBe('malformed');
    expect(v('v1.ab=c.def')).toBe('malformed');
    expect(v('v1.abc.de+f')).toBe('malformed');
    expect(v('v1.' + 'a'.repeat(70000) + '.b')).toBe('too_large');
    const good = signRequestState(1, BINDING, KEY, NOW + 1);
    expect(v(good + '-TAMPERED')).not.toBe('ok');
  });

  test('property: any one-character change of a token fails verification', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.constantFrom(...alphabet.split('')), (state, where, ch) => {
        const token = signRequestState(state, BINDING, KEY, NOW + 60_000);
        const i = where % token.length;
        fc.pre(token[i] !== ch);
        const changed = token.slice(0, i) + ch + token.slice(i + 1);
        return verifyRequestState(changed, BINDING, [KEY], NOW).ok === false;
      }),
      { numRuns: 300 },
    );
  });

  test('the params digest ignores member order and the per-round members', () => {
    const a = paramsDigest({ name: 't', arguments: { x: 1, y: [1, { b: 2, a: 1 }] } });
    const b = paramsDigest({
      arguments: { y: [1, { a: 1, b: 2 }], x: 1 },
      name: 't',
      _meta: { anything: true },
      inputResponses: { k: {} },
      requestState: 'v1.x.y',
    });
    expect(a).toBe(b);
    expect(paramsDigest({ name: 't', arguments: { x: 2 } })).not.toBe(a);
  });
});

describe('input checks (lib)', () => {
  test('checkInputRequired: shape, methods, and the client capabilities', () => {
    const e = elicitationRequest('Name?', { type: 'object', properties: {} });
    expect(e).toEqual({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } },
    });
    const ok = { resultType: 'input_required' as const, inputRequests: { a: e, b: listRootsRequest() } };
    expect(checkInputRequired(ok, { elicitation: {}, roots: {} })).toEqual({ ok: true });
    expect(checkInputRequired(ok, { elicitation: {} })).toEqual({
      ok: false,
      reason: 'missing_capability',
      requiredCapabilities: { roots: {} },
    });
    expect(checkInputRequired(ok, undefined)).toEqual({ ok: true });
    expect(checkInputRequired({ resultType: 'input_required' }, {})).toMatchObject({ reason: 'malformed' });
    expect(
      checkInputRequired({ resultType: 'input_required', inputRequests: { x: { method: 'ping' } } }, {}),
    ).toMatchObject({ reason: 'malformed' });
    expect(
      checkInputRequired(
        {
          resultType: 'input_required',
          inputRequests: { x: samplingRequest({ messages: [], maxTokens: 1 }) },
        },
        {},
      ),
    ).toMatchObject({ reason: 'missing_capability', requiredCapabilities: { sampling: {} } });
  });

  test('readInputResponses and missingCapabilities', () => {
    expect(readInputResponses(undefined, false)).toEqual({
      ok: true,
      present: false,
      responses: {},
      dropped: [],
    });
    expect(readInputResponses(null, true)).toMatchObject({ ok: false });
    expect(readInputResponses([], true)).toMatchObject({ ok: false });
    const r = readInputResponses({ a: { action: 'accept' }, b: 12345, c: null }, true);
    expect(r).toMatchObject({ ok: true, present: true, dropped: ['b', 'c'] });
    expect(r.ok && { ...r.responses }).toEqual({ a: { action: 'accept' } });
    expect(missingCapabilities({ sampling: {}, roots: {} }, { sampling: {} })).toEqual({ roots: {} });
    expect(missingCapabilities({ sampling: {} }, { sampling: {} })).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------

const SI = { name: 'mrtr', version: '1' };
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

function setup() {
  const calls: { tool: string; state: unknown; responses: unknown }[] = [];
  const tools = new ToolRegistry({
    tools: [
      {
        name: 'greet',
        description: 'asks for a name, keeps a state',
        inputSchema: { type: 'object', properties: { lang: { type: 'string' } } },
        call: (args, ctx) => {
          calls.push({ tool: 'greet', state: ctx.requestState, responses: ctx.inputResponses });
          const answer = ctx.inputResponses?.who;
          const content =
            answer?.action === 'accept' ? (answer.content as JsonObject | undefined) : undefined;
          if (typeof content?.name !== 'string') {
            return ctx.inputRequired!({
              inputRequests: { who: elicitationRequest('Who are you?', NAME_SCHEMA) },
              state: { asked: 'who', lang: args.lang ?? 'en' },
            });
          }
          return textResult(`Hello, ${content.name} (${JSON.stringify(ctx.requestState)})`);
        },
      },
      {
        name: 'needs-sampling',
        description: 'requires sampling',
        call: (_a, ctx) => {
          ctx.requireClientCapabilities!({ sampling: {} });
          return textResult('sampled');
        },
      },
      {
        name: 'hand-made-bad',
        description: 'returns an input-required result asking for an unknown method',
        call: () =>
          ({ resultType: 'input_required', inputRequests: { x: { method: 'tools/list' } } }) as never,
      },
    ],
  });
  const promptsHandler = prompts({
    prompts: [
      {
        name: 'ctx-prompt',
        description: 'asks for context',
        render: (_a, ctx) => {
          const c = ctx.inputResponses?.c;
          if (c === undefined)
            return ctx.inputRequired!({ inputRequests: { c: elicitationRequest('Context?', NAME_SCHEMA) } });
          return `context: ${JSON.stringify(c)}`;
        },
      },
    ],
  });
  const resourcesHandler = resources({
    templates: [
      {
        uriTemplate: 'ask://{id}',
        name: 'ask',
        read: (vars, ctx) => {
          const roots = ctx.inputResponses?.r?.roots;
          if (!Array.isArray(roots))
            return ctx.inputRequired!({ inputRequests: { r: listRootsRequest() }, state: vars.id });
          return { text: `${String(ctx.requestState)}: ${roots.length} roots`, mimeType: 'text/plain' };
        },
      },
    ],
  });
  const bareTools = {
    list: () => ({ resultType: 'input_required', requestState: 'x' }),
    call: () => ({ content: [] }),
  };
  return { calls, tools, promptsHandler, resourcesHandler, bareTools };
}

describe.each(PLATFORMS)('MRTR through dispatch() on %s', (platform) => {
  let s: Stack;
  let url: string;
  let fx: ReturnType<typeof setup>;
  let mcp: DispatchMiddleware;
  const FULL = { elicitation: {}, sampling: {}, roots: {} };

  function req(id: number, method: string, params: JsonObject, caps: JsonObject = FULL) {
    return { jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope(caps) } };
  }
  const toolCall = (id: number, params: JsonObject, caps?: JsonObject) => req(id, 'tools/call', params, caps);
  const hdr = (method: string, name?: string, user?: string) => ({
    ...modernHeaders(method, name),
    ...(user ? { 'x-user': user } : {}),
  });

  beforeAll(async () => {
    fx = setup();
    mcp = dispatch({
      anonymous: true,
      handlers: { tools: fx.tools, prompts: fx.promptsHandler, resources: fx.resourcesHandler },
      serverInfo: SI,
      inputRequests: { requestStateKey: [KEY] },
    });
    s = await stack(platform, [fakeAuth(), mcp]);
    url = `${s.base}/mcp`;
  });
  afterAll(() => s.close());
  beforeEach(() => {
    fx.calls.length = 0;
  });

  async function firstRound(user?: string) {
    const r = await post(
      url,
      toolCall(1, { name: 'greet', arguments: {} }),
      hdr('tools/call', 'greet', user),
    );
    return r.messages[0]!.result as JsonObject;
  }

  test('round 1 answers input_required (no cache hint, serverInfo); round 2 completes with the state', async () => {
    const r1 = await firstRound('alice');
    expect(r1).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        who: { method: 'elicitation/create', params: { mode: 'form', message: 'Who are you?' } },
      },
      _meta: { 'io.modelcontextprotocol/serverInfo': SI },
    });
    expect(typeof r1.requestState).toBe('string');
    expect(r1.ttlMs).toBeUndefined();
    expect(r1.cacheScope).toBeUndefined();
    const r2 = await post(
      url,
      toolCall(2, {
        name: 'greet',
        arguments: {},
        inputResponses: { who: { action: 'accept', content: { name: 'Ann' } }, extra: { ignored: true } },
        requestState: r1.requestState,
      }),
      hdr('tools/call', 'greet', 'alice'),
    );
    expect(r2.messages[0]!.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ann ({"asked":"who","lang":"en"})' }],
    });
  });

  test.each([
    ['tampered', (t: string) => t + '-TAMPERED', 'alice', {}, 'invalid'],
    ['another caller', (t: string) => t, 'bob', {}, 'invalid'],
    ['other arguments', (t: string) => t, 'alice', { lang: 'fr' }, 'invalid'],
    [
      'signed by another key',
      () => signRequestState(1, BINDING, OTHER, Date.now() + 60_000),
      'alice',
      {},
      'invalid',
    ],
    [
      'expired',
      () =>
        signRequestState(
          1,
          {
            principal: 'test:alice',
            method: 'tools/call',
            digest: paramsDigest({ name: 'greet', arguments: {} }),
          },
          KEY,
          Date.now() - 1,
        ),
      'alice',
      {},
      'expired',
    ],
  ])(
    'a %s requestState is refused with -32602 before the handler runs',
    async (_what, mutate, user, args, reason) => {
      const r1 = await firstRound('alice');
      fx.calls.length = 0;
      const r = await post(
        url,
        toolCall(3, {
          name: 'greet',
          arguments: args,
          inputResponses: { who: { action: 'accept', content: { name: 'Eve' } } },
          requestState: mutate(String(r1.requestState)),
        }),
        hdr('tools/call', 'greet', user),
      );
      expect(r.status).toBe(200);
      expect(r.messages[0]).toMatchObject({ id: 3, error: { code: -32602, data: { reason } } });
      expect(fx.calls).toHaveLength(0);
    },
  );

  test('the state is bound to the method: a tools/call state does not open a prompts/get', async () => {
    const r1 = await firstRound();
    const r = await post(
      url,
      req(4, 'prompts/get', { name: 'ctx-prompt', inputResponses: {}, requestState: r1.requestState }),
      hdr('prompts/get', 'ctx-prompt'),
    );
    expect(r.messages[0]).toMatchObject({ error: { code: -32602, data: { reason: 'invalid' } } });
  });

  test('invalid inputResponses: null → -32602; non-object entries are dropped and asked again', async () => {
    const nul = await post(
      url,
      toolCall(5, { name: 'greet', inputResponses: null }),
      hdr('tools/call', 'greet'),
    );
    expect(nul.messages[0]).toMatchObject({ error: { code: -32602 } });
    const num = await post(
      url,
      toolCall(6, { name: 'greet', inputResponses: { who: 12345 } }),
      hdr('tools/call', 'greet'),
    );
    expect(num.messages[0]!.result).toMatchObject({ resultType: 'input_required' });
    expect(fx.calls[0]!.responses).toEqual({});
  });

  test('-32021 (HTTP 400) when the request needs an undeclared client capability', async () => {
    const r = await post(url, toolCall(7, { name: 'greet' }, { sampling: {} }), hdr('tools/call', 'greet'));
    expect(r.status).toBe(400);
    expect(r.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32021,
        message: expect.stringContaining('elicitation'),
        data: { requiredCapabilities: { elicitation: {} } },
      },
    });
    const s2 = await post(
      url,
      toolCall(8, { name: 'needs-sampling' }, {}),
      hdr('tools/call', 'needs-sampling'),
    );
    expect(s2.status).toBe(400);
    expect(s2.messages[0]!.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    });
    const ok = await post(url, toolCall(9, { name: 'needs-sampling' }), hdr('tools/call', 'needs-sampling'));
    expect(ok.messages[0]!.result).toMatchObject({ content: [{ text: 'sampled' }] });
  });

  test('prompts/get and resources/read ask too', async () => {
    const p1 = await post(
      url,
      req(10, 'prompts/get', { name: 'ctx-prompt' }),
      hdr('prompts/get', 'ctx-prompt'),
    );
    expect(p1.messages[0]!.result).toMatchObject({ resultType: 'input_required', inputRequests: { c: {} } });
    const p2 = await post(
      url,
      req(11, 'prompts/get', { name: 'ctx-prompt', inputResponses: { c: { action: 'decline' } } }),
      hdr('prompts/get', 'ctx-prompt'),
    );
    expect(p2.messages[0]!.result).toMatchObject({
      resultType: 'complete',
      messages: [{ role: 'user', content: { type: 'text', text: 'context: {"action":"decline"}' } }],
    });
    const r1 = await post(
      url,
      req(12, 'resources/read', { uri: 'ask://42' }),
      hdr('resources/read', 'ask://42'),
    );
    const ir = r1.messages[0]!.result as JsonObject;
    expect(ir).toMatchObject({
      resultType: 'input_required',
      inputRequests: { r: { method: 'roots/list' } },
    });
    const r2 = await post(
      url,
      req(13, 'resources/read', {
        uri: 'ask://42',
        inputResponses: { r: { roots: [{ uri: 'file:///a' }] } },
        requestState: ir.requestState,
      }),
      hdr('resources/read', 'ask://42'),
    );
    expect(r2.messages[0]!.result).toMatchObject({
      resultType: 'complete',
      contents: [{ uri: 'ask://42', text: '42: 1 roots' }],
      ttlMs: 0,
      cacheScope: 'private',
    });
  });

  test('a malformed input-required result is a server bug (-32603)', async () => {
    const r = await post(url, toolCall(14, { name: 'hand-made-bad' }), hdr('tools/call', 'hand-made-bad'));
    expect(r.messages[0]).toMatchObject({ error: { code: -32603, message: 'Internal error' } });
  });

  test('legacy: the same handler, served with a real elicitation request on the SSE answer', async () => {
    const st = await openStream(
      url,
      { jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'greet', arguments: { lang: 'de' } } },
      await elicitingHeaders(url, { 'x-user': 'lena' }),
    );
    expect(st.headers['content-type']).toMatch(/^text\/event-stream/);
    const ask = await st.next();
    expect(ask).toMatchObject({
      jsonrpc: '2.0',
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Who are you?' },
    });
    expect(String(ask.id)).toMatch(/^mcpware-input-/);
    // Someone else's answer is not taken.
    const forged = await post(
      url,
      { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Mallory' } } },
      { ...legacyHeaders(), 'x-user': 'mallory' },
    );
    expect(forged.status).toBe(202);
    const answer = await post(
      url,
      { jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Lena' } } },
      { ...legacyHeaders(), 'x-user': 'lena' },
    );
    expect(answer.status).toBe(202);
    const final = await st.next();
    expect(final).toMatchObject({
      id: 20,
      result: { content: [{ type: 'text', text: 'Hello, Lena ({"asked":"who","lang":"de"})' }] },
    });
    expect((final.result as JsonObject).resultType).toBeUndefined();
    await st.ended;
  });

  test('legacy: an error answer fails the call; a client that goes away leaves nothing pending', async () => {
    const st = await openStream(
      url,
      { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'greet', arguments: {} } },
      await elicitingHeaders(url),
    );
    const ask = await st.next();
    await post(
      url,
      { jsonrpc: '2.0', id: ask.id, error: { code: -32601, message: 'no elicitation here' } },
      legacyHeaders(),
    );
    expect(await st.next()).toMatchObject({
      id: 21,
      error: {
        code: -32603,
        message: 'The client could not answer an input request',
        data: { inputRequest: 'who', error: { code: -32601, message: 'no elicitation here' } },
      },
    });

    const gone = await openStream(
      url,
      { jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'greet', arguments: {} } },
      await elicitingHeaders(url),
    );
    await gone.next();
    expect(mcp.stats().pendingInputs).toBe(1);
    gone.close();
    await until(() => mcp.stats().pendingInputs === 0, 'the pending input request to be dropped');
  });

  test('legacy without text/event-stream: the input cannot be asked for', async () => {
    const r = await post(
      url,
      { jsonrpc: '2.0', id: 23, method: 'tools/call', params: { name: 'greet', arguments: {} } },
      await elicitingHeaders(url, {}, 'application/json'),
    );
    expect(r.messages[0]).toMatchObject({ id: 23, error: { code: -32603 } });
  });
});

describe('MRTR: other rules', () => {
  test('input_required on another method is a server bug; a state signed by a replica with the same key verifies', async () => {
    const fx = setup();
    const a = await stack('node:http', [
      dispatch({
        anonymous: true,
        handlers: { tools: fx.tools },
        serverInfo: SI,
        inputRequests: { requestStateKey: KEY },
      }),
    ]);
    const b = await stack('node:http', [
      dispatch({
        anonymous: true,
        handlers: { tools: fx.tools },
        serverInfo: SI,
        inputRequests: { requestStateKey: [OTHER, KEY] },
      }),
    ]);
    const c = await stack('node:http', [
      dispatch({ anonymous: true, handlers: { tools: fx.bareTools }, serverInfo: SI }),
    ]);
    try {
      const params = { name: 'greet', arguments: {}, _meta: envelope({ elicitation: {} }) };
      const r1 = await post(
        `${a.base}/mcp`,
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params },
        modernHeaders('tools/call', 'greet'),
      );
      const state = (r1.messages[0]!.result as JsonObject).requestState;
      const r2 = await post(
        `${b.base}/mcp`,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: {
            ...params,
            inputResponses: { who: { action: 'accept', content: { name: 'Rep' } } },
            requestState: state,
          },
        },
        modernHeaders('tools/call', 'greet'),
      );
      expect(r2.messages[0]!.result).toMatchObject({ resultType: 'complete' });
      const list = await post(
        `${c.base}/mcp`,
        { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope() } },
        modernHeaders('tools/list'),
      );
      expect(list.messages[0]).toMatchObject({ error: { code: -32603 } });
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

/**
 * Legacy sessions through dispatch() on bare node:http and Express 5: an expired session (tiny ttl) and one of
 * another principal are refused 404 with their stable reasons (what audit and metrics read); a notification or
 * a posted answer with a bad session is refused too, without an id; the capabilities a session holds decide which
 * input requests are sent (roots yes, sampling no), and a prompt whose client lacks one answers an in-band
 * error naming it, never -32603; `sessions` options are validated.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dispatch } from '../../../../middleware/dispatch/index';
import { listRootsRequest, samplingRequest } from '../../../../lib/mrtr';
import type { Middleware } from '../../../../core/types';
import { PLATFORMS, type Stack, fakeAuth, stack } from '../../../support/dispatch-harness';
import { legacyHeaders, openStream, post } from '../../../support/streaming';

const SI = { name: 'sessions', version: '1' };

/** Records each answered request's refusal reason (as audit and metrics read it). */
function refusals(out: string[]): Middleware {
  return (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => {
    res.on('finish', () => out.push(req.locals?.refusal?.reason ?? 'none'));
    next();
  };
}

const prompts = {
  list: () => ({ prompts: [{ name: 'p' }, { name: 'r' }] }),
  get: (
    params: { name?: unknown },
    ctx: { inputRequired?: (r: unknown) => unknown; inputResponses?: unknown },
  ) => {
    if (ctx.inputResponses !== undefined)
      return { messages: [{ role: 'user', content: { type: 'text', text: 'answered' } }] };
    return ctx.inputRequired!({
      inputRequests: {
        ask: params.name === 'r' ? listRootsRequest() : samplingRequest({ messages: [], maxTokens: 1 }),
      },
    });
  },
};

async function initialize(url: string, capabilities: object, user = 'ada'): Promise<string> {
  const r = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 't', version: '1' } },
    },
    { ...legacyHeaders(), 'x-user': user },
  );
  return String(r.headers['mcp-session-id']);
}

describe.each(PLATFORMS)('legacy sessions through dispatch() on %s', (platform) => {
  let s: Stack;
  let expiring: Stack;
  const seen: string[] = [];
  beforeAll(async () => {
    const handlers = { prompts };
    s = await stack(platform, [fakeAuth(), refusals(seen), dispatch({ handlers, serverInfo: SI })]);
    expiring = await stack(platform, [
      fakeAuth(),
      refusals(seen),
      dispatch({ handlers, serverInfo: SI, sessions: { ttlMs: 1 } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([s.close(), expiring.close()]);
  });
  const url = (st: Stack) => `${st.base}/mcp`;
  const as = (sid: string, user = 'ada') => ({ ...legacyHeaders(), 'x-user': user, 'Mcp-Session-Id': sid });
  const list = { jsonrpc: '2.0', id: 7, method: 'prompts/list' };

  test('an expired session → 404 session_expired, id echoed', async () => {
    const sid = await initialize(url(expiring), {});
    // Longer than the 1 ms the session lives (a wait, not a timed assertion).
    await new Promise((r) => setTimeout(r, 20));
    seen.length = 0;
    const r = await post(url(expiring), list, as(sid));
    expect(r.status).toBe(404);
    expect(r.messages[0]).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32001, message: 'Session expired: initialize again' },
    });
    expect(seen).toEqual(['session_expired']);
  });

  test('a session of another principal → 404 session_foreign; its own principal is served', async () => {
    const sid = await initialize(url(s), {});
    seen.length = 0;
    const foreign = await post(url(s), list, as(sid, 'eve'));
    expect(foreign.status).toBe(404);
    expect(foreign.messages[0]).toMatchObject({ id: 7, error: { code: -32001 } });
    const own = await post(url(s), list, as(sid));
    expect(own.status).toBe(200);
    expect(seen).toEqual(['session_foreign', 'none']);
  });

  test('a notification or a posted answer with a bad session → 404 without an id', async () => {
    seen.length = 0;
    const n = await post(url(s), { jsonrpc: '2.0', method: 'notifications/initialized' }, as('s1.x.y'));
    expect(n.status).toBe(404);
    expect(n.messages[0]).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' } });
    const a = await post(url(s), { jsonrpc: '2.0', id: 'mcpware-input-x', result: {} }, as('s1.x.y'));
    expect(a.status).toBe(404);
    expect(seen).toEqual(['session_invalid', 'session_invalid']);
  });

  test('initialize with a stale session header starts a new session', async () => {
    const r = await post(
      url(s),
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      as('s1.stale.id'),
    );
    expect(r.status).toBe(200);
    expect(r.headers['mcp-session-id']).toMatch(/^s1\./);
  });

  test('the session decides: roots/list is sent to a client that declared roots; sampling is not', async () => {
    const sid = await initialize(url(s), { roots: { listChanged: true } });
    const roots = await openStream(
      url(s),
      { jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { name: 'r' } },
      as(sid),
    );
    expect(await roots.next()).toMatchObject({ method: 'roots/list' });
    roots.close();
    // A prompt has no tool error: an in-band error naming what the client lacks, never -32603.
    const sampling = await post(
      url(s),
      { jsonrpc: '2.0', id: 9, method: 'prompts/get', params: { name: 'p' } },
      as(sid),
    );
    expect(sampling.status).toBe(200);
    expect(sampling.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 9,
        error: {
          code: -32021,
          message: 'The client did not declare the sampling capability',
          data: { requiredCapabilities: { sampling: {} } },
        },
      },
    ]);
  });
});

describe('sessions options', () => {
  const make = (sessions: unknown) => () =>
    dispatch({ handlers: { prompts }, serverInfo: SI, sessions: sessions as never });
  test('ttlMs: a positive integer; unknown names refused with the closest known one', () => {
    expect(make({ ttlMs: 60_000 })).not.toThrow();
    expect(make({ ttlMs: 0 })).toThrow(/sessions\.ttlMs/);
    expect(make({ ttlMs: 1.5 })).toThrow(/sessions\.ttlMs/);
    expect(make({ ttl: 1000 })).toThrow(/sessions\."ttl".*did you mean "ttlMs"/);
    expect(make('24h')).toThrow(TypeError);
  });
});

/**
 * The dispatcher's components on their own: the requestState codec, the legacy input broker, the outbound
 * transforms, the error mapping and LazyAbort.
 */
import { ErrorCode, McpError } from '../../../lib/errors';
import { LazyAbort } from '../../../middleware/dispatch/handler-context';
import { createInputBroker } from '../../../middleware/dispatch/legacy-input';
import { createStateCodec } from '../../../middleware/dispatch/mrtr';
import { applyOutbound } from '../../../core/outbound';
import { methodNotFound, toRpcError } from '../../../middleware/dispatch/rpc-errors';
import type { Call } from '../../../middleware/dispatch/handler-context';
import type { RequestLocals } from '../../../core/types';

const KEY = new Uint8Array(32).fill(7);
const binding = { principal: 'p', method: 'tools/call', digest: 'd' };

describe('createStateCodec', () => {
  test('a key under 32 bytes, or none, is refused when the codec is made', () => {
    expect(() => createStateCodec({ keys: [new Uint8Array(31)], ttlMs: 1000 })).toThrow(RangeError);
    expect(() => createStateCodec({ keys: [], ttlMs: 1000 })).toThrow(RangeError);
  });

  test('what it mints it verifies, bound to the same principal, method and params only', () => {
    const codec = createStateCodec({ keys: [KEY], ttlMs: 60_000 });
    const token = codec.mint({ step: 2 }, binding);
    expect(codec.verify(token, binding)).toEqual(expect.objectContaining({ ok: true, state: { step: 2 } }));
    expect(codec.verify(token, { ...binding, principal: 'q' })).toEqual({
      ok: false,
      reason: 'wrong_principal',
    });
    expect(codec.verify(token, { ...binding, digest: 'e' })).toEqual({ ok: false, reason: 'wrong_params' });
    expect(codec.verify('v1.x.y', binding)).toEqual({ ok: false, reason: expect.any(String) });
  });

  test('rotation: a token minted with an older key still verifies while that key is listed', () => {
    const older = createStateCodec({ keys: [KEY], ttlMs: 60_000 });
    const rotated = createStateCodec({ keys: [new Uint8Array(32).fill(9), KEY], ttlMs: 60_000 });
    expect(rotated.verify(older.mint(1, binding), binding).ok).toBe(true);
    expect(older.verify(rotated.mint(1, binding), binding)).toEqual({ ok: false, reason: 'bad_signature' });
  });
});

describe('createInputBroker', () => {
  /** A call whose SSE answer records what is pushed; its client declared roots unless told otherwise. */
  function fakeCall(pushed: unknown[], canStream = true, clientCapabilities: object = { roots: {} }): Call {
    const reply = { canStream: () => canStream, push: (m: unknown) => (pushed.push(m), true) };
    return {
      reply,
      ac: new LazyAbort(),
      method: 'tools/call',
      era: 'legacy',
      principal: '',
      clientCapabilities,
    } as unknown as Call;
  }
  const ask = { resultType: 'input_required' as const, inputRequests: { a: { method: 'roots/list' } } };

  test('more rounds than maxRounds fail with -32603 before anything is sent', async () => {
    const broker = createInputBroker({ timeoutMs: 1000, maxRounds: 2 });
    const pushed: unknown[] = [];
    await expect(broker.ask(fakeCall(pushed), ask, 3)).rejects.toThrow(/more than 2 rounds/);
    expect(pushed).toEqual([]);
  });

  test('a request that cannot stream is refused; failAll fails what is pending', async () => {
    const broker = createInputBroker({ timeoutMs: 60_000, maxRounds: 8 });
    await expect(broker.ask(fakeCall([], false), ask, 1)).rejects.toThrow(/text\/event-stream/);
    const pushed: unknown[] = [];
    const waiting = broker.ask(fakeCall(pushed), ask, 1);
    expect(broker.pending).toBe(1);
    expect(pushed).toEqual([expect.objectContaining({ jsonrpc: '2.0', method: 'roots/list' })]);
    broker.failAll();
    await expect(waiting).rejects.toThrow(/shutting down/);
    expect(broker.pending).toBe(0);
  });

  test('a request for a capability the client did not declare fails before anything is sent', async () => {
    const broker = createInputBroker({ timeoutMs: 1000, maxRounds: 8 });
    const pushed: unknown[] = [];
    await expect(broker.ask(fakeCall(pushed, true, { sampling: {} }), ask, 1)).rejects.toThrow(
      'The client did not declare the roots capability',
    );
    expect(pushed).toEqual([]);
    expect(broker.pending).toBe(0);
  });

  test('no input requests: no answers, nothing sent', async () => {
    const broker = createInputBroker({ timeoutMs: 1000, maxRounds: 8 });
    const pushed: unknown[] = [];
    await expect(
      broker.ask(fakeCall(pushed), { resultType: 'input_required', requestState: 's' }, 1),
    ).resolves.toEqual({});
    expect(pushed).toEqual([]);
  });
});

describe('applyOutbound', () => {
  const locals = (outbound: unknown[]): RequestLocals => ({ outbound }) as unknown as RequestLocals;

  test('synchronous transforms give a plain value, applied in order', () => {
    const out = applyOutbound(
      locals([(v: unknown) => `${String(v)}a`, 'not a function', (v: unknown) => `${String(v)}b`]),
      'x',
      'tools/call',
      'result',
    );
    expect(out).toBe('xab');
    expect(applyOutbound({} as RequestLocals, 'x', 'tools/call', 'result')).toBe('x');
  });

  test('from the first asynchronous transform on, a promise; a synchronous throw is thrown', async () => {
    const seen: string[] = [];
    const out = applyOutbound(
      locals([
        (v: unknown, ctx: { kind: string }) => (seen.push(ctx.kind), Promise.resolve(`${String(v)}1`)),
        (v: unknown) => `${String(v)}2`,
      ]),
      'x',
      'm',
      'notification',
    );
    expect(out).toBeInstanceOf(Promise);
    await expect(out).resolves.toBe('x12');
    expect(seen).toEqual(['notification']);
    const boom = () => {
      throw new Error('no');
    };
    expect(() => applyOutbound(locals([boom]), 'x', 'm', 'result')).toThrow('no');
  });
});

describe('toRpcError', () => {
  test('an McpError keeps its code, message, data and status; anything else is a generic -32603', () => {
    expect(toRpcError(new McpError(ErrorCode.InvalidParams, 'bad', { a: 1 }), 'modern')).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'bad',
      data: { a: 1 },
      status: 200,
    });
    expect(toRpcError(new McpError(ErrorCode.RateLimited, 'slow'), 'legacy').status).toBe(429);
    expect(toRpcError(new Error('secret'), 'modern')).toEqual({
      code: -32603,
      message: 'Internal error',
      status: 200,
      hidden: 'unexpected',
    });
  });

  test('a code the era forbids is hidden; a legacy 404 becomes 200', () => {
    expect(toRpcError(new McpError(-32042, 'x'), 'modern')).toEqual(
      expect.objectContaining({ code: -32603, hidden: 'forbidden_code' }),
    );
    expect(toRpcError(new McpError(-32042, 'x'), 'legacy').code).toBe(-32042);
    expect(toRpcError(new McpError(-32000, 'gone', undefined, 404), 'legacy').status).toBe(200);
    expect(methodNotFound('x/y', 'modern', 'why')).toEqual({
      code: -32601,
      message: 'Method not found',
      data: { method: 'x/y', reason: 'why' },
      status: 404,
    });
  });
});

describe('LazyAbort', () => {
  test('a signal made after the abort is already aborted, with the reason', () => {
    const a = new LazyAbort();
    const reason = new Error('gone');
    a.abort(reason);
    a.abort(new Error('second'));
    expect(a.aborted).toBe(true);
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBe(reason);
  });

  test('a signal made before the abort fires once', () => {
    const a = new LazyAbort();
    const fired = jest.fn();
    a.signal.addEventListener('abort', fired);
    a.abort('r');
    a.abort('again');
    expect(fired).toHaveBeenCalledTimes(1);
  });
});

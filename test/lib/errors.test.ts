import { McpError, McpwareError, REFUSALS, refusal } from '../../lib/errors';

describe('McpwareError: operational errors with a stable code', () => {
  class StoreDown extends McpwareError<'ERR_STORE_UNAVAILABLE'> {
    constructor(cause: unknown) {
      super('ERR_STORE_UNAVAILABLE', 'the store is unavailable', { cause });
    }
  }

  test('carries its code, its subclass name and its cause', () => {
    const cause = new Error('ECONNREFUSED');
    const e = new StoreDown(cause);
    expect(e).toBeInstanceOf(McpwareError);
    expect(e).toBeInstanceOf(Error);
    expect(e.code).toBe('ERR_STORE_UNAVAILABLE');
    expect(e.name).toBe('StoreDown');
    expect(e.message).toBe('the store is unavailable');
    expect(e.cause).toBe(cause);
  });

  test('the base alone works too', () => {
    const e = new McpwareError('ERR_X', 'x');
    expect(e.name).toBe('McpwareError');
    expect(e.code).toBe('ERR_X');
    expect(e.cause).toBeUndefined();
  });
});

describe('McpError and refusals', () => {
  test('McpError keeps its JSON-RPC code, data and status', () => {
    const e = new McpError(-32602, 'bad', { field: 'x' }, 400);
    expect(e).toMatchObject({
      name: 'McpError',
      code: -32602,
      message: 'bad',
      data: { field: 'x' },
      status: 400,
    });
    expect(new McpError(-32602, 'bad').data).toBeUndefined();
  });

  test('a refusal takes its code and status from the table', () => {
    const r = refusal('batch');
    expect(r).toMatchObject({ ok: false, reason: 'batch', code: REFUSALS.batch.code });
    expect(refusal('batch', { message: 'no', data: 1 })).toMatchObject({ message: 'no', data: 1 });
  });
});

import { classifyAnswer } from '../../lib/answer';

describe('lib/answer: classifyAnswer', () => {
  test.each([
    [
      'a result',
      { jsonrpc: '2.0', id: 1, result: {} },
      { kind: 'result', id: 1, toolError: false, resultType: 'complete' },
    ],
    [
      'a tool error',
      { jsonrpc: '2.0', id: 'a', result: { isError: true } },
      { kind: 'result', toolError: true },
    ],
    [
      'isError not true',
      { jsonrpc: '2.0', id: 1, result: { isError: 'yes' } },
      { kind: 'result', toolError: false },
    ],
    [
      'a modern resultType',
      { jsonrpc: '2.0', id: 1, result: { resultType: 'input_required' } },
      { kind: 'result', resultType: 'input_required' },
    ],
    [
      'an error',
      { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'x' } },
      { kind: 'error', id: 2, code: -32602 },
    ],
    [
      'an error without id',
      { jsonrpc: '2.0', error: { code: -32700, message: 'x' } },
      { kind: 'error', code: -32700 },
    ],
    [
      'a notification',
      { jsonrpc: '2.0', method: 'notifications/progress' },
      { kind: 'notification', method: 'notifications/progress' },
    ],
    [
      'a request',
      { jsonrpc: '2.0', id: 5, method: 'sampling/createMessage' },
      { kind: 'request', method: 'sampling/createMessage' },
    ],
    ['a non-object result', { jsonrpc: '2.0', id: 1, result: 3 }, { kind: 'invalid' }],
    ['a bad resultType', { jsonrpc: '2.0', id: 1, result: { resultType: 7 } }, { kind: 'invalid' }],
    ['no jsonrpc', { id: 1, result: {} }, { kind: 'invalid' }],
    ['an array', [{ jsonrpc: '2.0', id: 1, result: {} }], { kind: 'invalid' }],
    ['null', null, { kind: 'invalid' }],
    ['a null id', { jsonrpc: '2.0', id: null, result: {} }, { kind: 'invalid' }],
  ])('%s', (_name, value, expected) => {
    expect(classifyAnswer(value)).toMatchObject(expected);
  });
});

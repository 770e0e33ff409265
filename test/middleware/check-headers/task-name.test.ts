/**
 * checkHeaders() over HTTP on the tasks extension's methods: `Mcp-Name` must carry `params.taskId` on
 * `tasks/get`, `tasks/update` and `tasks/cancel` (missing or another value: 400 / -32020, the dispatcher never
 * reached); a matching one lets the request through.
 */
import { checkHeaders } from '../../../middleware/check-headers/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { type Stack, memoryLogger, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'task-name', version: '1' };
const METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
const params = (taskId: unknown) => ({ taskId, inputResponses: {} });

describe('checkHeaders(): Mcp-Name on tasks/get, tasks/update, tasks/cancel', () => {
  let s: Stack;

  beforeAll(async () => {
    s = await stack('node:http', [
      checkHeaders(),
      // A dispatcher without tasks: a request that passes the header check is answered -32601 by it.
      dispatch({ anonymous: true, handlers: {}, serverInfo, logger: memoryLogger() }),
    ]);
  });
  afterAll(() => s.close());

  test.each(METHODS)('%s: a matching Mcp-Name reaches the dispatcher', async (method) => {
    const res = await s.client().request(method, params('aB3-_x'));
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(-32601);
  });

  test.each(METHODS)('%s: no Mcp-Name is refused 400 / -32020', async (method) => {
    const res = await s.client().request(method, params('aB3-_x'), { omitHeader: 'Mcp-Name' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: -32020,
      message: `Mcp-Name header is missing (required for ${method})`,
      data: { header: 'Mcp-Name' },
    });
  });

  test.each(METHODS)("%s: another task's id in Mcp-Name is refused 400 / -32020", async (method) => {
    const res = await s.client().request(method, params('aB3-_x'), { headers: { 'Mcp-Name': 'other' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: -32020,
      message: 'Mcp-Name header does not match params.taskId',
      data: { header: 'Mcp-Name', headerValue: 'other', bodyValue: 'aB3-_x' },
    });
  });

  test('a taskId that is not a string cannot be matched: 400 / -32020', async () => {
    const res = await s.client().request('tasks/get', params(7), { headers: { 'Mcp-Name': '7' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32020);
  });
});

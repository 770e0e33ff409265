/**
 * A ToolRegistry's task-supporting tools served by a real `dispatch({ tasks: {} })` behind `checkHeaders()`, as a
 * 2026-07-28 client declaring the tasks extension sees them over HTTP: the CreateTaskResult, `tasks/get` until the
 * end (the registry's result checks applied in the work), prepare()'s input round before the task, cancel, the
 * after hook at the task's end, and `Mcp-Name` carrying the task id.
 */
import { elicitationRequest } from '../../../lib/mrtr';
import type { JsonObject } from '../../../lib/jsonrpc';
import { TASKS_EXTENSION } from '../../../lib/tasks';
import { checkHeaders } from '../../../middleware/check-headers/index';
import { dispatch } from '../../../middleware/dispatch/index';
import { type ToolCallEnd, ToolRegistry, ok, textResult } from '../../../handlers/tools/index';
import { type Stack, deferred, memoryLogger, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'task-support-http', version: '1' };
const DECLARED = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} };
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

describe('ToolRegistry tasks over HTTP (dispatch with tasks)', () => {
  let s: Stack;
  const ends: ToolCallEnd[] = [];
  const starts: string[] = [];
  const held = deferred();
  const log = memoryLogger();

  beforeAll(async () => {
    const tools = new ToolRegistry({
      logger: log,
      before: ({ name }) => void starts.push(name),
      after: (e) => void ends.push(e),
      tools: [
        {
          name: 'double',
          taskSupport: 'optional',
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          outputSchema: { type: 'object', properties: { double: { type: 'integer' } }, required: ['double'] },
          call: async (args) => {
            await held.promise;
            return ok({ double: (args.n as number) * 2 });
          },
        },
        {
          name: 'liar',
          taskSupport: 'required',
          outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          call: () => ok({ n: 'not a number' }),
        },
        {
          name: 'greet_after_asking',
          taskSupport: 'required',
          prepare: (_args, ctx) =>
            ctx.inputResponses?.who === undefined
              ? ctx.inputRequired!({
                  inputRequests: {
                    who: elicitationRequest('Who?', {
                      type: 'object',
                      properties: { name: { type: 'string' } },
                    }),
                  },
                })
              : undefined,
          call: (_args, ctx) => {
            const content = ctx.inputResponses?.who?.content as { name?: string } | undefined;
            return textResult(`Hello, ${content?.name ?? 'nobody'}!`);
          },
        },
        {
          name: 'endless',
          taskSupport: 'required',
          call: (_args, ctx) =>
            new Promise((_resolve, reject) =>
              ctx.signal.addEventListener('abort', () => reject(new Error('stopped by the signal'))),
            ),
        },
      ],
    });
    s = await stack('node:http', [
      checkHeaders({ paramHeaders: tools.paramHeaders }),
      dispatch({ anonymous: true, handlers: { tools }, serverInfo, logger: log, tasks: {} }),
    ]);
  });
  afterAll(async () => {
    held.resolve();
    await s.close();
  });

  const client = () => s.client({ clientCapabilities: DECLARED });

  /** tasks/get until the task has ended (each answer read; no clock involved beyond yielding between polls). */
  async function untilEnded(taskId: string): Promise<JsonObject> {
    for (let i = 0; i < 500; i++) {
      const got = await client().request('tasks/get', { taskId });
      const body = got.body.result as JsonObject;
      if (TERMINAL.has(body.status as string)) return body;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`task ${taskId} did not end`);
  }

  test('an optional tool: a task, working, then completed with the checked result; the after hook at its end', async () => {
    const created = await client().callTool('double', { n: 21 });
    expect(created.status).toBe(200);
    const task = created.body.result;
    expect(task).toMatchObject({ resultType: 'task', status: 'working' });
    const got = await client().request('tasks/get', { taskId: task.taskId });
    expect(got.body.result).toMatchObject({ taskId: task.taskId, status: 'working' });
    expect(ends.filter((e) => e.name === 'double')).toEqual([]);
    held.resolve();
    const done = await untilEnded(task.taskId);
    expect(done).toMatchObject({
      status: 'completed',
      result: { structuredContent: { double: 42 }, content: [{ type: 'text', text: '{"double":42}' }] },
    });
    const end = ends.find((e) => e.name === 'double')!;
    expect(end).toMatchObject({ tool: 'double', outcome: 'ok', args: { n: 21 } });
    expect(end.ctx.taskId).toBe(task.taskId);
    expect(starts.filter((n) => n === 'double')).toEqual(['double']);
  });

  test('the same optional tool without the declared extension is called directly', async () => {
    held.resolve();
    const r = await s.client().callTool('double', { n: 2 });
    expect(r.body.result).toMatchObject({ resultType: 'complete', structuredContent: { double: 4 } });
  });

  test('a result that fails outputSchema fails the task with a generic -32603 (the detail to the log)', async () => {
    const created = await client().callTool('liar', {});
    const done = await untilEnded(created.body.result.taskId);
    expect(done).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(JSON.stringify(done)).not.toContain('outputSchema');
    expect(ends.find((e) => e.name === 'liar')).toMatchObject({ outcome: 'error' });
  });

  test("prepare()'s input round is answered in-band without a task; the retry makes the task, which sees the answer", async () => {
    const asked = await client().callTool('greet_after_asking', {});
    expect(asked.body.result).toMatchObject({ resultType: 'input_required' });
    expect(asked.body.result).not.toHaveProperty('taskId');
    expect(Object.keys(asked.body.result.inputRequests)).toEqual(['who']);
    const retry = await client().request('tools/call', {
      name: 'greet_after_asking',
      arguments: {},
      inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } },
    });
    expect(retry.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(retry.body.result).not.toHaveProperty('requestState');
    const done = await untilEnded(retry.body.result.taskId);
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Hello, Ada!' }] },
    });
  });

  test('tasks/cancel aborts the work: the task ends cancelled, the after hook says cancelled', async () => {
    const created = await client().callTool('endless', {});
    const taskId = created.body.result.taskId as string;
    const cancel = await client().request('tasks/cancel', { taskId });
    expect(cancel.status).toBe(200);
    expect((await untilEnded(taskId)).status).toBe('cancelled');
    for (let i = 0; i < 100 && !ends.some((e) => e.name === 'endless'); i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ends.find((e) => e.name === 'endless')).toMatchObject({ outcome: 'cancelled' });
  });

  test('a task-only tool without the declared extension: 400 / -32021, nothing runs', async () => {
    const before = ends.length;
    const r = await s.client().callTool('endless', {});
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    expect(ends.slice(before).map((e) => e.outcome)).toEqual(['error']);
  });

  test('Mcp-Name must carry the task id on tasks/get (another id: 400 / -32020)', async () => {
    const created = await client().callTool('liar', {});
    const taskId = created.body.result.taskId as string;
    const good = await client().request('tasks/get', { taskId });
    expect(good.body.result.taskId).toBe(taskId);
    const bad = await client().request('tasks/get', { taskId }, { headers: { 'Mcp-Name': 'another-task' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe(-32020);
  });
});

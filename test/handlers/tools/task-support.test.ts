/**
 * A tool's `taskSupport` and `prepare` in the ToolRegistry: registration checks, the -32021 of a task-only tool
 * (over HTTP, both eras), and the task path through a `ctx.tasks` host that records the work it is given and runs
 * its rounds as the dispatcher does.
 */
import { McpError } from '../../../lib/errors';
import type { JsonObject } from '../../../lib/jsonrpc';
import { TASKS_EXTENSION } from '../../../lib/tasks';
import { dispatch } from '../../../middleware/dispatch/index';
import type { CallContext, TaskHost, TaskWork } from '../../../core/contract';
import {
  type CallToolResult,
  type Tool,
  type ToolCallEnd,
  ToolRegistry,
  ok,
  textResult,
  toolError,
} from '../../../handlers/tools/index';
import { ERAS, type Stack, memoryLogger, stack } from '../../support/dispatch-harness';

const serverInfo = { name: 'task-support', version: '1' };
const DECLARED = { extensions: { [TASKS_EXTENSION]: {} } };
const CREATED = { resultType: 'task', taskId: 't-1', status: 'working' };

/** A task host as the dispatcher's: it keeps the work and the tool name, and answers a CreateTaskResult. */
function host(
  declared: boolean,
  refuse?: McpError,
): TaskHost & { works: { work: TaskWork; tool: string }[] } {
  const works: { work: TaskWork; tool: string }[] = [];
  return {
    declared,
    works,
    start(work, info) {
      if (refuse) return Promise.reject(refuse);
      works.push({ work, tool: info.tool });
      return Promise.resolve({ ...CREATED });
    },
  };
}

function ctxWith(tasks: TaskHost | undefined, extra: Partial<CallContext> = {}): CallContext {
  const ctx = { era: 'modern', locals: {}, signal: new AbortController().signal, ...extra } as CallContext;
  if (tasks) ctx.tasks = tasks;
  return ctx;
}

/** The task's context for a round, as the dispatcher makes it: the request's, with a taskId and its own signal. */
function taskCtx(ctx: CallContext, ac = new AbortController(), more: Partial<CallContext> = {}): CallContext {
  return { ...ctx, taskId: 't-1', signal: ac.signal, ...more };
}

const sumSchema = {
  type: 'object',
  properties: { n: { type: 'integer' } },
  required: ['n'],
  additionalProperties: false,
} as const;

describe('taskSupport and prepare at registration', () => {
  const call = () => textResult('x');

  test.each(['forbidden', 'optional', 'required', undefined] as const)('taskSupport %s is accepted', (t) => {
    const tool: Tool = { name: 'a', call };
    if (t !== undefined) tool.taskSupport = t;
    expect(new ToolRegistry({ tools: [tool] }).names).toEqual(['a']);
  });

  test('another value is refused, naming the closest one', () => {
    expect(() => new ToolRegistry({ tools: [{ name: 'a', call, taskSupport: 'requird' as never }] })).toThrow(
      /tool "a": taskSupport must be "forbidden", "optional" or "required", got "requird"; did you mean "required"\?/,
    );
    expect(() => new ToolRegistry({ tools: [{ name: 'a', call, taskSupport: true as never }] })).toThrow(
      TypeError,
    );
  });

  test('a misspelt field is refused with a hint', () => {
    expect(
      () => new ToolRegistry({ tools: [{ name: 'a', call, tasksupport: 'optional' } as never] }),
    ).toThrow(/unknown field "tasksupport"; did you mean "taskSupport"\?/);
  });

  test('prepare must be a function, on a tool that may run as a task', () => {
    expect(
      () => new ToolRegistry({ tools: [{ name: 'a', call, taskSupport: 'optional', prepare: 1 as never }] }),
    ).toThrow(/prepare must be a function/);
    expect(() => new ToolRegistry({ tools: [{ name: 'a', call, prepare: () => undefined }] })).toThrow(
      /prepare runs only before a task is made; set taskSupport/,
    );
    expect(
      new ToolRegistry({ tools: [{ name: 'a', call, taskSupport: 'required', prepare: () => undefined }] })
        .names,
    ).toEqual(['a']);
  });

  test('tools/list does not show taskSupport (the extension defines no tool field for it)', async () => {
    const reg = new ToolRegistry({ tools: [{ name: 'a', call, taskSupport: 'required' }] });
    const listed = await reg.list({}, ctxWith(undefined));
    expect(listed.tools[0]).toEqual({
      name: 'a',
      inputSchema: { type: 'object', additionalProperties: false },
    });
  });
});

describe('tools/call of a tool with taskSupport (a ctx.tasks host)', () => {
  let calls: { args: JsonObject; ctx: CallContext }[];
  let ends: ToolCallEnd[];
  let starts: string[];
  let prepared: JsonObject[];

  function registry(): ToolRegistry {
    const record =
      (result: (args: JsonObject, ctx: CallContext) => unknown) => (args: JsonObject, ctx: CallContext) => {
        calls.push({ args, ctx });
        return result(args, ctx) as CallToolResult;
      };
    return new ToolRegistry({
      tools: [
        {
          name: 'job',
          taskSupport: 'optional',
          inputSchema: sumSchema,
          outputSchema: { type: 'object', properties: { double: { type: 'integer' } }, required: ['double'] },
          call: record((a) => ok({ double: (a.n as number) * 2 })),
        },
        {
          name: 'only_task',
          taskSupport: 'required',
          inputSchema: sumSchema,
          call: record(() => textResult('t')),
        },
        { name: 'direct', inputSchema: sumSchema, call: record(() => textResult('direct')) },
        {
          name: 'sloppy',
          taskSupport: 'required',
          call: record(() => ({ nope: 1 })),
        },
        { name: 'failing', taskSupport: 'required', call: record(() => toolError('upstream said no')) },
        {
          name: 'asks',
          taskSupport: 'required',
          call: record((_a, ctx) =>
            ctx.inputResponses?.confirm === undefined
              ? ctx.inputRequired!({
                  inputRequests: { confirm: { method: 'elicitation/create', params: {} } },
                })
              : textResult(`confirmed ${JSON.stringify(ctx.inputResponses.confirm)}`),
          ),
        },
        {
          name: 'stops',
          taskSupport: 'required',
          call: record(
            (_a, ctx) =>
              new Promise((_resolve, reject) =>
                ctx.signal.addEventListener('abort', () => reject(new Error('stopped'))),
              ),
          ),
        },
        {
          name: 'gated',
          taskSupport: 'required',
          inputSchema: sumSchema,
          prepare: (args, ctx) => {
            prepared.push(args);
            if (args.n === 0) return toolError('n must not be 0');
            if (ctx.inputResponses?.name === undefined)
              return ctx.inputRequired!({
                inputRequests: { name: { method: 'elicitation/create', params: {} } },
              });
            return undefined;
          },
          call: record((_a, ctx) => textResult(`hello ${JSON.stringify(ctx.inputResponses?.name)}`)),
        },
      ],
      before: ({ name }) => void starts.push(name),
      after: (e) => void ends.push(e),
    });
  }

  beforeEach(() => {
    calls = [];
    ends = [];
    starts = [];
    prepared = [];
  });

  test('optional, declared: the answer is the task; the work runs the tool with the task context and checks its result', async () => {
    const reg = registry();
    const tasks = host(true);
    const ctx = ctxWith(tasks);
    const created = await reg.call({ name: 'job', arguments: { n: 21 } }, ctx);
    expect(created).toEqual(CREATED);
    expect(calls).toEqual([]); // nothing ran in the request
    expect(tasks.works.map((w) => w.tool)).toEqual(['job']);
    expect(ctx.locals.tool).toBe('job');
    expect(starts).toEqual(['job']);
    expect(ends).toEqual([]); // the after hook waits for the task's end
    const tctx = taskCtx(ctx);
    const result = await tasks.works[0]!.work(tctx);
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"double":42}' }],
      structuredContent: { double: 42 },
    });
    expect(calls).toEqual([{ args: { n: 21 }, ctx: tctx }]);
    expect(starts).toEqual(['job']); // the before hook ran once, at creation
    expect(ends).toHaveLength(1);
    expect(ends[0]).toEqual(
      expect.objectContaining({
        name: 'job',
        tool: 'job',
        args: { n: 21 },
        ctx: tctx,
        outcome: 'ok',
        result,
      }),
    );
  });

  test('optional, not declared or no tasks at all: called directly, as a tool without taskSupport', async () => {
    const reg = registry();
    for (const tasks of [host(false), undefined]) {
      const r = await reg.call({ name: 'job', arguments: { n: 2 } }, ctxWith(tasks));
      expect(r.structuredContent).toEqual({ double: 4 });
    }
    const declared = host(true);
    expect((await reg.call({ name: 'direct', arguments: { n: 1 } }, ctxWith(declared))).content).toEqual([
      { type: 'text', text: 'direct' },
    ]);
    expect(declared.works).toEqual([]);
    expect(ends.map((e) => e.outcome)).toEqual(['ok', 'ok', 'ok']);
  });

  test('required, not declared: -32021 naming the extension, before the tool or the before hook runs', async () => {
    const reg = registry();
    for (const tasks of [host(false), undefined]) {
      const err = await Promise.resolve(
        reg.call({ name: 'only_task', arguments: { n: 1 } }, ctxWith(tasks)),
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect(err).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    }
    expect(calls).toEqual([]);
    expect(starts).toEqual([]);
    expect(ends.map((e) => [e.tool, e.outcome])).toEqual([
      ['only_task', 'error'],
      ['only_task', 'error'],
    ]);
  });

  test('required, not declared, invalid arguments: the arguments are checked first (a tool error)', async () => {
    const r = await registry().call({ name: 'only_task', arguments: { n: 'x' } }, ctxWith(host(false)));
    expect(r.isError).toBe(true);
    expect(ends.map((e) => e.outcome)).toEqual(['invalid_arguments']);
  });

  test('a result that fails its checks fails the work (a plain Error: the task fails -32603)', async () => {
    const tasks = host(true);
    const ctx = ctxWith(tasks);
    await registry().call({ name: 'sloppy' }, ctx);
    await expect(tasks.works[0]!.work(taskCtx(ctx))).rejects.toThrow(/returned an invalid result/);
    expect(ends.map((e) => e.outcome)).toEqual(['error']);
  });

  test('a tool error ends the work with outcome tool_error (the task is still completed)', async () => {
    const tasks = host(true);
    const ctx = ctxWith(tasks);
    await registry().call({ name: 'failing' }, ctx);
    expect(await tasks.works[0]!.work(taskCtx(ctx))).toEqual(expect.objectContaining({ isError: true }));
    expect(ends.map((e) => e.outcome)).toEqual(['tool_error']);
  });

  test('an input request leaves the task waiting; the next round gets the answers; the hook runs once, at the end', async () => {
    const tasks = host(true);
    const ctx = ctxWith(tasks);
    await registry().call({ name: 'asks' }, ctx);
    const inputRequired = (r: { inputRequests?: unknown }) => ({ resultType: 'input_required', ...r });
    const first = await tasks.works[0]!.work(
      taskCtx(ctx, undefined, { inputRequired } as Partial<CallContext>),
    );
    expect(first).toEqual({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create', params: {} } },
    });
    expect(ends).toEqual([]);
    const second = await tasks.works[0]!.work(
      taskCtx(ctx, undefined, { inputResponses: { confirm: { ok: true } } }),
    );
    expect(second).toEqual({ content: [{ type: 'text', text: 'confirmed {"ok":true}' }] });
    expect(ends.map((e) => e.outcome)).toEqual(['ok']);
  });

  test("tasks/cancel aborts the work's signal: the hook sees outcome cancelled", async () => {
    const tasks = host(true);
    const ctx = ctxWith(tasks);
    await registry().call({ name: 'stops' }, ctx);
    const ac = new AbortController();
    const running = tasks.works[0]!.work(taskCtx(ctx, ac));
    ac.abort();
    await expect(running).rejects.toThrow('stopped');
    expect(ends.map((e) => e.outcome)).toEqual(['cancelled']);
  });

  test("the task cannot be made (the caller's bounds): the McpError is the answer, and the hook runs then", async () => {
    const refused = new McpError(-32603, 'Too many tasks', { reason: 'task_limit' });
    await expect(
      Promise.resolve(registry().call({ name: 'job', arguments: { n: 1 } }, ctxWith(host(true, refused)))),
    ).rejects.toBe(refused);
    expect(ends.map((e) => [e.outcome, e.error])).toEqual([['error', refused]]);
  });

  test('prepare: an input request is the answer (no task), a result too, nothing makes the task', async () => {
    const reg = registry();
    const tasks = host(true);
    const inputRequired = (r: { inputRequests?: unknown }) => ({ resultType: 'input_required', ...r });
    const asked = await reg.call(
      { name: 'gated', arguments: { n: 1 } },
      ctxWith(tasks, { inputRequired } as Partial<CallContext>),
    );
    expect(asked).toEqual({
      resultType: 'input_required',
      inputRequests: { name: { method: 'elicitation/create', params: {} } },
    });
    const refusedByPrepare = await reg.call({ name: 'gated', arguments: { n: 0 } }, ctxWith(tasks));
    expect(refusedByPrepare).toEqual({ content: [{ type: 'text', text: 'n must not be 0' }], isError: true });
    expect(tasks.works).toEqual([]);
    expect(ends.map((e) => e.outcome)).toEqual(['input_required', 'tool_error']);
    // The retry with the answer: prepare says nothing, the task is made, and its first round sees the answer.
    const retry = ctxWith(tasks, { inputResponses: { name: { content: 'Ada' } } });
    expect(await reg.call({ name: 'gated', arguments: { n: 1 } }, retry)).toEqual(CREATED);
    expect(prepared).toEqual([{ n: 1 }, { n: 0 }, { n: 1 }]);
    const done = await tasks.works[0]!.work(taskCtx(retry));
    expect(done).toEqual({ content: [{ type: 'text', text: 'hello {"content":"Ada"}' }] });
    expect(calls).toHaveLength(1);
  });

  test("a work that ends before its creation is answered: the hook still runs once, with the work's outcome", async () => {
    const ctx = ctxWith({
      declared: true,
      async start(work) {
        await work(taskCtx(ctx));
        return { ...CREATED };
      },
    });
    expect(await registry().call({ name: 'job', arguments: { n: 1 } }, ctx)).toEqual(CREATED);
    expect(ends.map((e) => [e.outcome, e.ctx.taskId])).toEqual([['ok', 't-1']]);
  });

  test('without an after hook the work returns the same result', async () => {
    const tasks = host(true);
    const reg = new ToolRegistry({
      tools: [{ name: 'j', taskSupport: 'optional', call: () => textResult('j') }],
    });
    const ctx = ctxWith(tasks);
    expect(await reg.call({ name: 'j' }, ctx)).toEqual(CREATED);
    expect(await tasks.works[0]!.work(taskCtx(ctx))).toEqual({ content: [{ type: 'text', text: 'j' }] });
  });
});

describe.each(ERAS)('a task-only tool over HTTP, dispatch without tasks (%s era)', (era) => {
  let s: Stack;
  const ends: ToolCallEnd[] = [];
  let called = 0;

  beforeAll(async () => {
    const reg = new ToolRegistry({
      tools: [
        {
          name: 'failing_job',
          taskSupport: 'required',
          call: () => {
            called++;
            return textResult('ran');
          },
        },
        { name: 'maybe_task', taskSupport: 'optional', call: () => textResult('ran directly') },
      ],
      after: (e) => void ends.push(e),
    });
    s = await stack('node:http', [
      dispatch({ anonymous: true, handlers: { tools: reg }, serverInfo, logger: memoryLogger() }),
    ]);
  });
  afterAll(() => s.close());

  test('the task-only tool is refused before it runs: -32021 (modern, HTTP 400), a tool error (legacy)', async () => {
    const res = await s.client({ era }).callTool('failing_job', {});
    if (era === 'modern') {
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: -32021,
        message: `Tool "failing_job" runs only as a task: declare the ${TASKS_EXTENSION} extension in the request's client capabilities`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    } else {
      expect(res.status).toBe(200);
      expect(res.body.result).toEqual({
        content: [
          {
            type: 'text',
            text: `Tool "failing_job" runs only as a task, which this server offers to 2026-07-28 clients declaring the ${TASKS_EXTENSION} extension`,
          },
        ],
        isError: true,
      });
    }
    expect(called).toBe(0);
  });

  test('an optional tool is called directly, declared extension or not', async () => {
    for (const clientCapabilities of [{}, DECLARED]) {
      const res = await s.client({ era, clientCapabilities }).callTool('maybe_task', {});
      expect(res.body.result.content).toEqual([{ type: 'text', text: 'ran directly' }]);
    }
  });
});

/**
 * audit() in front of dispatch({ tasks }), over HTTP: the creating tools/call's record names the task, and its
 * end writes a task_end record with the task's id, tool, owner and outcome.
 */
import { ErrorCode, McpError } from '../../../lib/errors';
import type { TaskWork } from '../../../core/contract';
import { create, pollTask, terminal, type Works } from '../../support/tasks-harness';
import { type TaskStack, eventually, taskStack } from '../../support/task-stack';

describe('audit and dispatch() tasks', () => {
  let s: TaskStack;
  const works: Works = new Map<string, TaskWork>([
    ['greet', () => ({ content: [{ type: 'text', text: 'hello' }] })],
    [
      'broken',
      () => {
        throw new McpError(ErrorCode.InvalidParams, 'Bad job');
      },
    ],
  ]);
  beforeAll(async () => {
    s = await taskStack(works);
  });
  afterAll(() => s.close());

  it.each([
    ['greet', 'completed', 'ok', null],
    ['broken', 'failed', 'error', -32602],
  ])('a task of %s: the creating record, then task_end %s / %s', async (tool, status, outcome, code) => {
    const t = await create(s.base, tool);
    await pollTask(s.base, t.taskId, terminal);
    const ended = () => s.records.find((r) => r.event === 'task_end' && r.task_id === t.taskId);
    await eventually(() => ended() !== undefined, 'the task_end record');
    const created = s.records.find(
      (r) => r.event === 'audit' && r.task_id === t.taskId && r.method === 'tools/call',
    );
    expect(created).toMatchObject({ result_type: 'task', principal: 'alice', target: tool, outcome: 'ok' });
    expect(ended()).toMatchObject({
      request_id: created!.request_id,
      principal: 'alice',
      principal_source: 'api-key',
      target_type: 'tool',
      target: tool,
      task_status: status,
      outcome,
      error_code: code,
    });
    expect(ended()!.duration_ms).toEqual(expect.any(Number));
    expect(s.records.filter((r) => r.task_id === t.taskId && r.event === 'task_end')).toHaveLength(1);
  });
});

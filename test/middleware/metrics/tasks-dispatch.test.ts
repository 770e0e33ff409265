/**
 * metrics() in front of dispatch({ tasks }), over HTTP: the creating tools/call counts as outcome task, the
 * task runs in mcp_tasks_running until its end is counted in mcp_tasks_total, labelled by the task's tool.
 */
import type { TaskWork } from '../../../core/contract';
import { create, gate, pollTask, terminal, type Works } from '../../support/tasks-harness';
import { type TaskStack, eventually, taskStack } from '../../support/task-stack';

describe('metrics and dispatch() tasks', () => {
  let s: TaskStack;
  const release = gate();
  const works: Works = new Map<string, TaskWork>([
    [
      'held',
      async () => {
        await release.promise;
        return { content: [], isError: true };
      },
    ],
  ]);
  beforeAll(async () => {
    s = await taskStack(works);
  });
  afterAll(async () => {
    release.open();
    await s.close();
  });

  const text = () => s.registry.metrics();

  it('a task: tool_calls_total task, tasks_running 1, then tasks_total tool_error', async () => {
    const t = await create(s.base, 'held');
    await eventually(async () => (await text()).includes('mcp_tasks_running{tool="held"} 1'), 'running');
    expect(await text()).toMatch(/mcp_tool_calls_total\{tool="[a-z]+",outcome="task"\} 1/);
    release.open();
    await pollTask(s.base, t.taskId, terminal);
    await eventually(
      async () => (await text()).includes('mcp_tasks_total{tool="held",outcome="tool_error"} 1'),
      'the end counted',
    );
    expect(await text()).toContain('mcp_tasks_running{tool="held"} 0');
  });
});

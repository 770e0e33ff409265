/**
 * metrics() and tasks, over HTTP: a tools/call answered with a task counts as `outcome="task"`; the task is in
 * `mcp_tasks_running{tool}` until it ends, and its end in `mcp_tasks_total{tool,outcome}`, labelled by the task's
 * registered tool within the tool label budget.
 */
import { Registry } from 'prom-client';
import { type MetricsOptions, metrics } from '../../../middleware/metrics/index';
import { COMPLETED, type TaskApp, rpc, startTaskApp } from '../../support/task-app';

const apps: TaskApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function open(o: MetricsOptions = {}) {
  const registry = new Registry();
  const app = await startTaskApp({ before: [metrics({ registry, ...o })] });
  apps.push(app);
  /** The value of `name`'s series with exactly these labels, or undefined when it has none. */
  const value = async (name: string, labels: Record<string, string>): Promise<number | undefined> => {
    const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
    const want = JSON.stringify(Object.entries(labels).sort());
    const v = (m?.values as { labels: Record<string, unknown>; value: number }[] | undefined)?.find(
      (s) => JSON.stringify(Object.entries(s.labels).sort()) === want,
    );
    return v?.value;
  };
  /** Wait until the series has `n` (a request is recorded when its response finishes, near the client's read). */
  const reaches = async (name: string, labels: Record<string, string>, n: number): Promise<void> => {
    for (let i = 0; i < 2000; i++) {
      if ((await value(name, labels)) === n) return;
      await new Promise((r) => setTimeout(r, 2));
    }
    throw new Error(`${name} ${JSON.stringify(labels)} never reached ${n}: ${await value(name, labels)}`);
  };
  return { app, value, reaches, registry };
}

describe('metrics and tasks', () => {
  it('a call answered with a task: tool_calls_total outcome task, running until it ends, then tasks_total', async () => {
    const { app, value, reaches } = await open();
    expect((await rpc(app.port, 'alice', 'tools/call', { name: 'slow' })).status).toBe(200);
    await reaches('mcp_tool_calls_total', { tool: 'slow', outcome: 'task' }, 1);
    expect(await value('mcp_tool_calls_total', { tool: 'slow', outcome: 'ok' })).toBeUndefined();
    expect(await value('mcp_tasks_running', { tool: 'slow' })).toBe(1);
    expect(await value('mcp_tasks_total', { tool: 'slow', outcome: 'error' })).toBeUndefined();

    await rpc(app.port, 'alice', 'tools/call', { name: 'slow' }, 2);
    await reaches('mcp_tasks_running', { tool: 'slow' }, 2);
    app.task('task-1').end({ status: 'failed', outcome: 'error', code: -32000, elapsedMs: 9 });
    expect(await value('mcp_tasks_running', { tool: 'slow' })).toBe(1);
    expect(await value('mcp_tasks_total', { tool: 'slow', outcome: 'error' })).toBe(1);
    app.task('task-2').end(COMPLETED);
    app.task('task-2').end({ status: 'cancelled', outcome: 'cancelled', elapsedMs: 1 }); // a second end is none
    expect(await value('mcp_tasks_running', { tool: 'slow' })).toBe(0);
    expect(await value('mcp_tasks_total', { tool: 'slow', outcome: 'ok' })).toBe(1);
    expect(await value('mcp_tasks_total', { tool: 'slow', outcome: 'cancelled' })).toBeUndefined();
  });

  it('a tasks/get that found the worker gone counts the task lost, never as running', async () => {
    const { app, value, reaches, registry } = await open();
    expect((await rpc(app.port, 'bob', 'tasks/get', { taskId: 'abc', lost: true })).status).toBe(200);
    await reaches('mcp_tasks_total', { tool: 'slow', outcome: 'lost' }, 1);
    expect(await value('mcp_tasks_running', { tool: 'slow' })).toBeUndefined();
    const text = await registry.getSingleMetricAsString('mcp_request_duration_seconds');
    expect(text).toContain('mcp_request_duration_seconds_count{method="tasks/get",outcome="ok"} 1');
  });

  it('an end another request recorded (elsewhere) leaves running but is not counted again', async () => {
    const { app, value, reaches } = await open();
    await rpc(app.port, 'alice', 'tools/call', { name: 'slow' });
    await reaches('mcp_tasks_running', { tool: 'slow' }, 1);
    app.task('task-1').end({ status: 'failed', outcome: 'lost', elapsedMs: 5, elsewhere: true });
    expect(await value('mcp_tasks_running', { tool: 'slow' })).toBe(0);
    expect(await value('mcp_tasks_total', { tool: 'slow', outcome: 'lost' })).toBeUndefined();
  });

  it("the task's tool label comes from the tool label budget: past maxTools it is other", async () => {
    const { app, value, reaches } = await open({ maxTools: 1 });
    await rpc(app.port, 'alice', 'tools/call', { name: 'first' });
    await reaches('mcp_tasks_running', { tool: 'first' }, 1);
    await rpc(app.port, 'alice', 'tools/call', { name: 'second' }, 2);
    await reaches('mcp_tasks_running', { tool: 'other' }, 1);
    app.task('task-1').end(COMPLETED);
    app.task('task-2').end({ status: 'completed', outcome: 'tool_error', elapsedMs: 2 });
    expect(await value('mcp_tasks_total', { tool: 'first', outcome: 'ok' })).toBe(1);
    expect(await value('mcp_tasks_total', { tool: 'other', outcome: 'tool_error' })).toBe(1);
    expect(await value('mcp_tasks_total', { tool: 'second', outcome: 'tool_error' })).toBeUndefined();
  });
});

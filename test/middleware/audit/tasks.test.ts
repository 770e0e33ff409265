/**
 * audit() and tasks, over HTTP: the request that made a task carries its id and `result_type: "task"`; the
 * task's end writes one more record (`event: "task_end"`), and so does a tasks/get that found the task's worker
 * gone.
 */
import winston from 'winston';
import Transport from 'winston-transport';
import { AUDIT_KEYS, audit, auditJsonFormat } from '../../../middleware/audit/index';
import { COMPLETED, type TaskApp, rpc, startTaskApp } from '../../support/task-app';

type Rec = Record<string, unknown>;

function capture(): { logger: { log(l: string, m: string, meta: Rec): void }; records: Rec[] } {
  const records: Rec[] = [];
  return { records, logger: { log: (_l, _m, meta) => records.push({ ...meta }) } };
}

const apps: TaskApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});

async function open(logger: Parameters<typeof audit>[0]['logger']): Promise<TaskApp> {
  const app = await startTaskApp({ before: [audit({ logger })] });
  apps.push(app);
  return app;
}

/** Wait for `n` records (the request's is written when its response closes, after the client has the answer). */
async function records(list: Rec[], n: number): Promise<Rec[]> {
  for (let i = 0; i < 2000 && list.length < n; i++) await new Promise((r) => setTimeout(r, 2));
  return list;
}

describe('audit and tasks', () => {
  it('the creating call carries the task id; the task end is a task_end record of its own', async () => {
    const { logger, records: list } = capture();
    const app = await open(logger);
    const made = await rpc(app.port, 'alice', 'tools/call', { name: 'slow', arguments: { q: 1 } });
    expect(made.status).toBe(200);
    const [created] = await records(list, 1);
    expect(created).toMatchObject({
      event: 'audit',
      method: 'tools/call',
      target: 'slow',
      outcome: 'ok',
      result_type: 'task',
      task_id: 'task-1',
      task_status: '',
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(list).toHaveLength(1); // nothing more until the task ends

    app.task('task-1').end({ status: 'failed', outcome: 'error', code: -32000, elapsedMs: 1234.56789 });
    expect(list).toHaveLength(2);
    const ended = list[1]!;
    expect(Object.keys(ended).sort()).toEqual([...AUDIT_KEYS].sort());
    expect(ended).toMatchObject({
      event: 'task_end',
      request_id: created!.request_id,
      principal: 'alice',
      principal_source: 'test',
      auth_method: 'test',
      method: 'tools/call',
      target_type: 'tool',
      target: 'slow',
      decision: 'allowed',
      status: 0,
      outcome: 'error',
      error_code: -32000,
      duration_ms: 1234.568,
      bytes_in: 0,
      bytes_out: 0,
      args_sha256: created!.args_sha256,
      result_type: '',
      task_id: 'task-1',
      task_status: 'failed',
    });
    expect(Date.parse(ended.time as string)).toBeGreaterThanOrEqual(Date.parse(created!.time as string));
  });

  it('a task that ends completed, cancelled or with a tool error: one task_end record each', async () => {
    const { logger, records: list } = capture();
    const app = await open(logger);
    for (let i = 1; i <= 3; i++) await rpc(app.port, 'alice', 'tools/call', { name: `t${i}` }, i);
    await records(list, 3);
    app.task('task-1').end(COMPLETED);
    app.task('task-2').end({ status: 'cancelled', outcome: 'cancelled', elapsedMs: 3 });
    app.task('task-3').end({ status: 'completed', outcome: 'tool_error', elapsedMs: 4 });
    app.task('task-3').end(COMPLETED); // a second end is none
    const ends = list.filter((r) => r.event === 'task_end');
    expect(ends.map((r) => [r.task_id, r.target, r.task_status, r.outcome, r.error_code])).toEqual([
      ['task-1', 't1', 'completed', 'ok', null],
      ['task-2', 't2', 'cancelled', 'cancelled', null],
      ['task-3', 't3', 'completed', 'tool_error', null],
    ]);
  });

  it('an end another request recorded (elsewhere) writes no second task_end', async () => {
    const { logger, records: list } = capture();
    const app = await open(logger);
    await rpc(app.port, 'alice', 'tools/call', { name: 't1' });
    await records(list, 1);
    app.task('task-1').end({ status: 'failed', outcome: 'lost', elapsedMs: 5, elsewhere: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(list.map((r) => r.event)).toEqual(['audit']);
  });

  it('a tasks/get that found the worker gone writes its record, then the task_end (lost)', async () => {
    const { logger, records: list } = capture();
    const app = await open(logger);
    expect((await rpc(app.port, 'bob', 'tasks/get', { taskId: 'abc', lost: true })).status).toBe(200);
    await records(list, 2);
    expect(list.map((r) => [r.event, r.method, r.task_id, r.result_type, r.outcome, r.task_status])).toEqual([
      ['audit', 'tasks/get', 'abc', 'complete', 'ok', ''],
      ['task_end', 'tasks/get', 'abc', '', 'lost', 'failed'],
    ]);
    expect(list[1]).toMatchObject({
      principal: 'bob',
      target_type: 'tool',
      target: 'slow',
      error_code: -32603,
    });
  });

  it('a request without a task: result_type set, task_id and task_status empty', async () => {
    const { logger, records: list } = capture();
    const app = await open(logger);
    await rpc(app.port, 'alice', 'tools/list');
    const [r] = await records(list, 1);
    expect(r).toMatchObject({ event: 'audit', result_type: 'complete', task_id: '', task_status: '' });
  });

  it('auditJsonFormat writes a task_end line with the keys in the record order', async () => {
    const lines: string[] = [];
    class Lines extends Transport {
      override log(info: Record<symbol, unknown>, done: () => void): void {
        lines.push(info[Symbol.for('message')] as string);
        done();
      }
    }
    const logger = winston.createLogger({ format: auditJsonFormat(), transports: [new Lines()] });
    const app = await open(logger);
    await rpc(app.port, 'alice', 'tools/call', { name: 'slow' });
    for (let i = 0; i < 2000 && lines.length < 1; i++) await new Promise((r) => setTimeout(r, 2));
    app.task('task-1').end(COMPLETED);
    for (let i = 0; i < 2000 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 2));
    const parsed = lines.map((l) => JSON.parse(l) as Rec);
    expect(parsed.map((p) => p.event)).toEqual(['audit', 'task_end']);
    for (const p of parsed) expect(Object.keys(p)).toEqual([...AUDIT_KEYS, 'level', 'message']);
  });
});

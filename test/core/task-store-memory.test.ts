/**
 * The memory task store against the shared task store suite (on a clock the tests move), and what is particular
 * to it: the bound on tasks of all owners together, and its options.
 */
import { memoryTaskStore } from '../../core/task-store';
import { newTask } from '../../lib/tasks';
import { runTaskStoreSuite } from './task-store.suite';

let time = Date.parse('2026-07-28T12:00:00Z');
const clock = (): number => time;

describe('memory task store', () => {
  runTaskStoreSuite({
    newStore: async () => memoryTaskStore({ clock }),
    now: clock,
    elapse: async (ms) => {
      time += ms;
    },
    shortTtlMs: 1000,
  });

  const task = (owner: string, id: string, ttlMs = 60_000) =>
    newTask({ id, owner, now: time, ttlMs, pollIntervalMs: 1000, worker: 'w', leaseMs: 15_000 });
  const WIDE = { maxTasks: 100, maxBytes: 1 << 20 };

  it('maxTasks bounds the tasks of all owners together', async () => {
    const store = memoryTaskStore({ maxTasks: 2, clock });
    expect(await store.create(task('a', '1'), WIDE)).toEqual({ ok: true });
    expect(await store.create(task('b', '1'), WIDE)).toEqual({ ok: true });
    expect(await store.create(task('c', '1'), WIDE)).toEqual({ ok: false, reason: 'task_limit' });
    await store.close?.();
  });

  it('expired tasks of other owners do not count against maxTasks (they are purged before a refusal)', async () => {
    const store = memoryTaskStore({ maxTasks: 2, clock });
    expect(await store.create(task('a', '1', 1000), WIDE)).toEqual({ ok: true });
    expect(await store.create(task('b', '1', 1000), WIDE)).toEqual({ ok: true });
    time += 1001;
    expect(await store.create(task('c', '1'), WIDE)).toEqual({ ok: true });
    expect(await store.create(task('c', '2'), WIDE)).toEqual({ ok: true });
    expect(await store.create(task('c', '3'), WIDE)).toEqual({ ok: false, reason: 'task_limit' });
    await store.close?.();
  });

  it('refuses unknown options naming the closest one, and bad values', () => {
    expect(() => memoryTaskStore({ maxTask: 5 } as never)).toThrow(
      /memoryTaskStore: unknown option "maxTask"; did you mean "maxTasks"\?/,
    );
    expect(() => memoryTaskStore({ maxTasks: 0 })).toThrow(
      /memoryTaskStore: option "maxTasks" must be an integer ≥ 1/,
    );
    expect(() => memoryTaskStore({ clock: 5 } as never)).toThrow(/option "clock" must be a function/);
  });
});

/**
 * One behavioural suite for every task store: the memory store and the Redis store (one server, and a cluster)
 * must give the same answers to the same calls. Each store's test file calls `runTaskStoreSuite`.
 */
import { randomBytes } from 'node:crypto';
import { MIN_TASK_BYTES, type TaskBounds, type TaskStore } from '../../core/task-store';
import { type StoredTask, finish, lapse, newTask, renewLease, requestCancel } from '../../lib/tasks';

export interface TaskStoreSuiteOptions {
  /** A fresh store (its own keys). */
  newStore(): Promise<TaskStore>;
  /** The store's clock (what `createdAt` is read from). */
  now(): number;
  /** Let `ms` pass on the store's clock (a fake clock moves; a real one is waited for). */
  elapse(ms: number): Promise<void>;
  /** A TTL short enough to wait for with `elapse` (the tasks meant to live use an hour). */
  shortTtlMs: number;
}

const HOUR = 3_600_000;
const WIDE: TaskBounds = { maxTasks: 1000, maxBytes: 1 << 20 };
const id = (): string => randomBytes(12).toString('base64url');
const principal = (): string => `apikey:${randomBytes(6).toString('hex')}`;

export function runTaskStoreSuite(o: TaskStoreSuiteOptions): void {
  const task = (owner: string, extra: Partial<StoredTask> = {}): StoredTask => ({
    ...newTask({
      id: id(),
      owner,
      tool: 'report',
      now: o.now(),
      ttlMs: HOUR,
      pollIntervalMs: 1000,
      worker: 'w1',
      leaseMs: 15_000,
    }),
    ...extra,
  });
  const bytesOf = (t: StoredTask): number => Buffer.byteLength(JSON.stringify(t));
  /** A task whose JSON is past MIN_TASK_BYTES (below it, a task counts as MIN_TASK_BYTES). */
  const big = (owner: string, extra: Partial<StoredTask> = {}): StoredTask =>
    task(owner, { tool: 'report-'.padEnd(MIN_TASK_BYTES + 100, 'x'), ...extra });

  describe('create, get, replace', () => {
    it('a created task is read back as it was stored, and a read copy changed by the caller changes nothing', async () => {
      const store = await o.newStore();
      const t = task(principal());
      expect(await store.create(t, WIDE)).toEqual({ ok: true });
      const read = await store.get(t.owner, t.id);
      expect(read).toEqual(t);
      read!.status = 'failed';
      expect(await store.get(t.owner, t.id)).toEqual(t);
    });

    it('an unknown id is undefined; a second create of a live id is a conflict and leaves the task as it was', async () => {
      const store = await o.newStore();
      const t = task(principal());
      expect(await store.get(t.owner, t.id)).toBeUndefined();
      expect(await store.create(t, WIDE)).toEqual({ ok: true });
      expect(await store.create({ ...t, tool: 'other' }, WIDE)).toEqual({ ok: false, reason: 'conflict' });
      expect((await store.get(t.owner, t.id))?.tool).toBe('report');
    });

    it('replace writes the next rev; a stale or skipped rev is a conflict; an unknown task is gone', async () => {
      const store = await o.newStore();
      const t = task(principal());
      await store.create(t, WIDE);
      const renewed = renewLease(t, 'w1', t.leaseUntil + 5000, o.now(), 'half way')!;
      expect(await store.replace(renewed, WIDE)).toEqual({ ok: true });
      expect(await store.get(t.owner, t.id)).toEqual(renewed);
      // Written over the revision it was read at (0), which is gone now.
      expect(await store.replace(requestCancel(t, o.now())!, WIDE)).toEqual({
        ok: false,
        reason: 'conflict',
      });
      expect(await store.replace({ ...renewed, rev: renewed.rev + 2 }, WIDE)).toEqual({
        ok: false,
        reason: 'conflict',
      });
      expect(await store.get(t.owner, t.id)).toEqual(renewed);
      expect(await store.replace({ ...renewed, id: id() }, WIDE)).toEqual({ ok: false, reason: 'gone' });
    });

    it('a task moves through its life by successive replaces', async () => {
      const store = await o.newStore();
      let t = task(principal());
      await store.create(t, WIDE);
      for (const step of [
        (x: StoredTask) => renewLease(x, 'w1', x.leaseUntil + 1, o.now()),
        (x: StoredTask) => requestCancel(x, o.now()),
        (x: StoredTask) => finish(x, { status: 'cancelled' }, o.now()),
      ]) {
        const read = (await store.get(t.owner, t.id))!;
        t = step(read)!;
        expect(await store.replace(t, WIDE)).toEqual({ ok: true });
      }
      expect(await store.get(t.owner, t.id)).toMatchObject({
        status: 'cancelled',
        rev: 3,
        cancelRequested: true,
      });
    });
  });

  describe('owners', () => {
    it("another owner's id is undefined to get and gone to replace, and the task is untouched", async () => {
      const store = await o.newStore();
      const t = task('apikey:alice');
      await store.create(t, WIDE);
      expect(await store.get('apikey:bob', t.id)).toBeUndefined();
      const stolen = { ...requestCancel(t, o.now())!, owner: 'apikey:bob' };
      expect(await store.replace(stolen, WIDE)).toEqual({ ok: false, reason: 'gone' });
      expect(await store.get('apikey:alice', t.id)).toEqual(t);
    });

    it('owners are compared exactly: a different case or a trailing space is another owner', async () => {
      const store = await o.newStore();
      const t = task('oidc:https://idp.example|Alice');
      await store.create(t, WIDE);
      for (const other of [
        'oidc:https://idp.example|alice',
        'oidc:https://idp.example|Alice ',
        'OIDC:https://idp.example|Alice',
        '',
      ])
        expect(await store.get(other, t.id)).toBeUndefined();
      expect(await store.get(t.owner, t.id)).toEqual(t);
    });

    it('two owners may hold the same id: each reads and writes its own task', async () => {
      const store = await o.newStore();
      const shared = id();
      const a = task('apikey:alice', { id: shared });
      const b = task('apikey:bob', { id: shared, tool: 'other' });
      expect(await store.create(a, WIDE)).toEqual({ ok: true });
      expect(await store.create(b, WIDE)).toEqual({ ok: true });
      expect(await store.replace(requestCancel(b, o.now())!, WIDE)).toEqual({ ok: true });
      expect(await store.get('apikey:alice', shared)).toEqual(a);
      expect(await store.get('apikey:bob', shared)).toMatchObject({ tool: 'other', cancelRequested: true });
    });
  });

  describe('bounds per owner', () => {
    it('maxTasks: a create past it is task_limit; another owner is not affected', async () => {
      const store = await o.newStore();
      const bounds = { maxTasks: 2, maxBytes: 1 << 20 };
      const owner = principal();
      expect(await store.create(task(owner), bounds)).toEqual({ ok: true });
      expect(await store.create(task(owner), bounds)).toEqual({ ok: true });
      expect(await store.create(task(owner), bounds)).toEqual({ ok: false, reason: 'task_limit' });
      expect(await store.create(task(principal()), bounds)).toEqual({ ok: true });
    });

    it('exact counts under concurrency: of 20 parallel creates with maxTasks 5, exactly 5 are stored', async () => {
      const store = await o.newStore();
      const owner = principal();
      const tasks = Array.from({ length: 20 }, () => task(owner));
      const writes = await Promise.all(tasks.map((t) => store.create(t, { maxTasks: 5, maxBytes: 1 << 20 })));
      expect(writes.filter((w) => w.ok)).toHaveLength(5);
      expect(writes.filter((w) => !w.ok && w.reason === 'task_limit')).toHaveLength(15);
      const found = await Promise.all(tasks.map((t) => store.get(owner, t.id)));
      expect(found.filter((t) => t !== undefined)).toHaveLength(5);
    });

    it('maxBytes counts the JSON of every live task, on create and on a replace that grows', async () => {
      const store = await o.newStore();
      const owner = principal();
      const [a, b, c] = [big(owner), big(owner), big(owner)];
      const size = bytesOf(a);
      const bounds = { maxTasks: 100, maxBytes: 2 * size + 100 };
      expect(await store.create(a, bounds)).toEqual({ ok: true });
      expect(await store.create(b, bounds)).toEqual({ ok: true });
      expect(await store.create(c, bounds)).toEqual({ ok: false, reason: 'task_bytes' });
      expect(await store.create(big(principal()), bounds)).toEqual({ ok: true }); // another owner's bytes
      // a grows by 60 bytes: within the bound; then by 60 more: past it.
      const grown = finish(a, { status: 'completed', result: { text: 'x'.repeat(30) } }, o.now())!;
      const bigger = bytesOf(grown) - size;
      const fits = { ...grown, result: { text: 'x'.repeat(30 + 60 - bigger) } };
      expect(await store.replace(fits, bounds)).toEqual({ ok: true });
      const tooBig = { ...fits, rev: fits.rev + 1, result: { text: 'x'.repeat(200) } };
      expect(await store.replace(tooBig, bounds)).toEqual({ ok: false, reason: 'task_bytes' });
      expect(await store.get(owner, a.id)).toEqual(fits);
      // A replace that shrinks frees bytes for a new task.
      const small = { ...fits, rev: fits.rev + 1, result: {} };
      expect(await store.replace(small, bounds)).toEqual({ ok: true });
      const d = big(owner);
      expect(
        await store.create(d, { ...bounds, maxBytes: bytesOf(small) + bytesOf(b) + bytesOf(d) }),
      ).toEqual({
        ok: true,
      });
    });

    it('a small task counts as MIN_TASK_BYTES', async () => {
      const store = await o.newStore();
      const owner = principal();
      const bounds = { maxTasks: 100, maxBytes: 2 * MIN_TASK_BYTES };
      expect(bytesOf(task(owner))).toBeLessThan(MIN_TASK_BYTES / 2);
      expect(await store.create(task(owner), bounds)).toEqual({ ok: true });
      expect(await store.create(task(owner), bounds)).toEqual({ ok: true });
      expect(await store.create(task(owner), bounds)).toEqual({ ok: false, reason: 'task_bytes' });
    });

    it('a task can still end when its owner is at the byte bound: a small failure or a lapse is written', async () => {
      const store = await o.newStore();
      const t = task(principal());
      await store.create(t, WIDE);
      const full = { maxTasks: 100, maxBytes: Math.max(bytesOf(t), MIN_TASK_BYTES) }; // the owner is at it
      const lost = lapse(t, t.leaseUntil + 1)!;
      expect(bytesOf(lost)).toBeGreaterThan(bytesOf(t));
      expect(await store.replace(lost, full)).toEqual({ ok: true });
      expect(await store.get(t.owner, t.id)).toEqual(lost);
      const u = task(principal());
      await store.create(u, WIDE);
      const failed = finish(
        u,
        { status: 'failed', error: { code: -32000, message: 'x'.repeat(200) } },
        o.now(),
      )!;
      expect(
        await store.replace(failed, { ...full, maxBytes: Math.max(bytesOf(u), MIN_TASK_BYTES) }),
      ).toEqual({
        ok: true,
      });
    });

    it('a replace that does not grow is written even when the owner is over a smaller bound', async () => {
      const store = await o.newStore();
      const t = task(principal());
      await store.create(t, WIDE);
      const renewed = renewLease(t, 'w1', t.leaseUntil, o.now())!;
      expect(bytesOf(renewed)).toBe(bytesOf(t));
      expect(await store.replace(renewed, { maxTasks: 1, maxBytes: 10 })).toEqual({ ok: true });
    });
  });

  describe('expiry', () => {
    it('an expired task is undefined to get and gone to replace; a task within its TTL stays', async () => {
      const store = await o.newStore();
      const owner = principal();
      const brief = task(owner, { ttlMs: o.shortTtlMs });
      const long = task(owner);
      await store.create(brief, WIDE);
      await store.create(long, WIDE);
      await o.elapse(o.shortTtlMs + 50);
      expect(await store.get(owner, brief.id)).toBeUndefined();
      expect(await store.replace(requestCancel(brief, o.now())!, WIDE)).toEqual({
        ok: false,
        reason: 'gone',
      });
      expect(await store.get(owner, long.id)).toEqual(long);
    });

    it("the purge frees the owner's quota: tasks and bytes", async () => {
      const store = await o.newStore();
      const owner = principal();
      const first = big(owner, { ttlMs: o.shortTtlMs });
      const bounds = { maxTasks: 1, maxBytes: bytesOf(first) + 10 };
      expect(await store.create(first, bounds)).toEqual({ ok: true });
      expect(await store.create(big(owner), bounds)).toEqual({ ok: false, reason: 'task_limit' });
      expect(await store.create(big(owner), { ...bounds, maxTasks: 2 })).toEqual({
        ok: false,
        reason: 'task_bytes',
      });
      await o.elapse(o.shortTtlMs + 50);
      const second = big(owner);
      expect(await store.create(second, bounds)).toEqual({ ok: true });
      expect(await store.get(owner, second.id)).toEqual(second);
    });

    it('an expired id may be created again', async () => {
      const store = await o.newStore();
      const owner = principal();
      const t = task(owner, { ttlMs: o.shortTtlMs });
      await store.create(t, WIDE);
      await o.elapse(o.shortTtlMs + 50);
      const again = task(owner, { id: t.id });
      expect(await store.create(again, WIDE)).toEqual({ ok: true });
      expect(await store.get(owner, t.id)).toEqual(again);
    });
  });

  describe('concurrent writes', () => {
    it('of 10 parallel replaces over the same rev, exactly one wins and the others are conflicts', async () => {
      const store = await o.newStore();
      const t = task(principal());
      await store.create(t, WIDE);
      const writes = Array.from({ length: 10 }, (_, i) => ({
        ...renewLease(t, 'w1', t.leaseUntil + i, o.now())!,
      }));
      const results = await Promise.all(writes.map((w) => store.replace(w, WIDE)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok && r.reason === 'conflict')).toHaveLength(9);
      const winner = writes[results.findIndex((r) => r.ok)];
      expect(await store.get(t.owner, t.id)).toEqual(winner);
    });

    it('a cancel and the work ending race from the same read: one is written, the other must read again', async () => {
      const store = await o.newStore();
      const t = task(principal());
      await store.create(t, WIDE);
      const cancel = requestCancel(t, o.now())!;
      const done = finish(t, { status: 'completed', result: { content: [] } }, o.now())!;
      const [c, d] = await Promise.all([store.replace(cancel, WIDE), store.replace(done, WIDE)]);
      expect([c.ok, d.ok].filter(Boolean)).toHaveLength(1);
      const stored = (await store.get(t.owner, t.id))!;
      if (c.ok) {
        // The work reads the cancel and ends the task cancelled instead.
        const ended = finish(stored, { status: 'cancelled' }, o.now())!;
        expect(await store.replace(ended, WIDE)).toEqual({ ok: true });
        expect(await store.get(t.owner, t.id)).toMatchObject({ status: 'cancelled' });
      } else {
        expect(stored).toEqual(done);
        expect(requestCancel(stored, o.now())).toBeUndefined(); // an ended task is not asked to stop
      }
    });
  });
}

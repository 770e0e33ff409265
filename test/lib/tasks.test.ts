/**
 * lib/tasks.ts, the tasks extension's pure state machine and wire shapes: every transition from every status,
 * the CreateTaskResult and DetailedTask shapes, the params of tasks/get|update|cancel, the wire keys of input
 * rounds, and properties over random histories (fast-check).
 */
import fc from 'fast-check';
import type { JsonObject } from '../../lib/jsonrpc';
import type { InputRequest } from '../../lib/mrtr';
import {
  MAX_TASK_ID_LENGTH,
  type StoredTask,
  TASKS_EXTENSION,
  TASKS_REQUIRED_CAPABILITIES,
  type TaskStatus,
  WORKER_LOST_ERROR,
  acceptResponses,
  askInput,
  createTaskResult,
  declaresTasks,
  detailedTask,
  expiresAt,
  finish,
  handlerKey,
  isTerminal,
  lapse,
  newTask,
  readTaskParams,
  renewLease,
  requestCancel,
  takeResponses,
  wireKey,
} from '../../lib/tasks';

const T0 = Date.parse('2026-07-28T12:00:00.000Z');
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ELICIT: InputRequest = { method: 'elicitation/create', params: { message: 'Sure?' } };
const YES: JsonObject = { action: 'accept', content: { ok: true } };

const fresh = (): StoredTask =>
  newTask({
    id: 't1',
    owner: 'apikey:alice',
    tool: 'report',
    now: T0,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    worker: 'w1',
    leaseMs: 15_000,
  });

/** A task in each status, reached through the transitions. */
function inStatus(status: TaskStatus): StoredTask {
  const t = fresh();
  switch (status) {
    case 'working':
      return t;
    case 'input_required':
      return askInput(t, { confirm: ELICIT }, T0 + 1, 'waiting')!;
    case 'completed':
      return finish(
        t,
        { status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } },
        T0 + 1,
      )!;
    case 'failed':
      return finish(
        t,
        { status: 'failed', error: { code: -32000, message: 'boom', data: { x: 1 } } },
        T0 + 1,
      )!;
    case 'cancelled':
      return finish(requestCancel(t, T0 + 1)!, { status: 'cancelled' }, T0 + 2)!;
  }
}

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/** Every transition, applied at a time within the lease. */
const TRANSITIONS: Record<string, (t: StoredTask) => StoredTask | undefined> = {
  askInput: (t) => askInput(t, { more: ELICIT }, T0 + 10),
  acceptResponses: (t) => acceptResponses(t, { [wireKey(t.round, 'confirm')]: YES }, T0 + 10).task,
  takeResponses: (t) => takeResponses(t, T0 + 10)?.task,
  requestCancel: (t) => requestCancel(t, T0 + 10),
  'finish completed': (t) => finish(t, { status: 'completed', result: { content: [] } }, T0 + 10),
  'finish failed': (t) => finish(t, { status: 'failed', error: { code: -32603, message: 'x' } }, T0 + 10),
  'finish cancelled': (t) => finish(t, { status: 'cancelled' }, T0 + 10),
  'renewLease (its worker)': (t) => renewLease(t, 'w1', T0 + 30_000, T0 + 10),
  'renewLease (another worker)': (t) => renewLease(t, 'w2', T0 + 30_000, T0 + 10),
  'lapse (within the lease)': (t) => lapse(t, t.leaseUntil),
  'lapse (after the lease)': (t) => lapse(t, t.leaseUntil + 1),
};

/** The status each transition leads to from each status (undefined: it does not apply). */
const EXPECTED: Record<string, Partial<Record<TaskStatus, TaskStatus>>> = {
  askInput: { working: 'input_required', input_required: 'input_required' },
  acceptResponses: { input_required: 'working' },
  takeResponses: {},
  requestCancel: { working: 'working', input_required: 'input_required' },
  'finish completed': { working: 'completed', input_required: 'completed' },
  'finish failed': { working: 'failed', input_required: 'failed' },
  'finish cancelled': { working: 'cancelled', input_required: 'cancelled' },
  'renewLease (its worker)': { working: 'working', input_required: 'input_required' },
  'renewLease (another worker)': {},
  'lapse (within the lease)': {},
  'lapse (after the lease)': { working: 'failed', input_required: 'failed' },
};

describe('transitions from every status', () => {
  const cases = Object.keys(TRANSITIONS).flatMap((name) => STATUSES.map((from) => [name, from] as const));
  it.each(cases)('%s from %s', (name, from) => {
    const t = inStatus(from);
    const before = structuredClone(t);
    const out = TRANSITIONS[name]!(t);
    expect(t).toEqual(before); // the input is never changed
    const to = EXPECTED[name]![from];
    if (to === undefined) {
      expect(out).toBeUndefined();
      return;
    }
    expect(out).toBeDefined();
    expect(out!.status).toBe(to);
    expect(out!.rev).toBe(t.rev + 1);
    expect(out!.updatedAt).toBeGreaterThanOrEqual(t.updatedAt);
    expect({ id: out!.id, owner: out!.owner, createdAt: out!.createdAt, ttlMs: out!.ttlMs }).toEqual({
      id: t.id,
      owner: t.owner,
      createdAt: t.createdAt,
      ttlMs: t.ttlMs,
    });
  });

  it('newTask: working, rev 0, round 0, the lease from now, no tool when none is given', () => {
    expect(fresh()).toEqual({
      id: 't1',
      owner: 'apikey:alice',
      tool: 'report',
      status: 'working',
      createdAt: T0,
      updatedAt: T0,
      ttlMs: 60_000,
      pollIntervalMs: 1000,
      worker: 'w1',
      leaseUntil: T0 + 15_000,
      rev: 0,
      round: 0,
    });
    const bare = newTask({
      id: 'x',
      owner: 'o',
      now: 1,
      ttlMs: 2,
      pollIntervalMs: 3,
      worker: 'w',
      leaseMs: 4,
    });
    expect(Object.hasOwn(bare, 'tool')).toBe(false);
    expect(expiresAt(bare)).toBe(3);
  });

  it('isTerminal', () => {
    expect(STATUSES.filter(isTerminal)).toEqual(['completed', 'failed', 'cancelled']);
  });

  it('updatedAt never goes back, whatever the clock says', () => {
    const t = { ...fresh(), updatedAt: T0 + 500 };
    expect(requestCancel(t, T0)!.updatedAt).toBe(T0 + 500);
    expect(requestCancel(t, T0 + 900)!.updatedAt).toBe(T0 + 900);
  });
});

describe('input rounds', () => {
  it('askInput opens a round: wire keys <round>:<key>, no responses, the status message set or cleared', () => {
    const t = askInput(
      { ...fresh(), statusMessage: 'half way' },
      { a: ELICIT, b: ELICIT },
      T0 + 1,
      'need two',
    )!;
    expect(t).toMatchObject({ status: 'input_required', round: 1, statusMessage: 'need two', responses: {} });
    expect(Object.keys(t.inputRequests!)).toEqual(['1:a', '1:b']);
    expect(
      Object.hasOwn(askInput({ ...fresh(), statusMessage: 'x' }, { a: ELICIT }, T0)!, 'statusMessage'),
    ).toBe(false);
  });

  it('acceptResponses: takes outstanding keys only; a partial answer stays input_required; the last makes it working', () => {
    const t = askInput(fresh(), { a: ELICIT, b: ELICIT }, T0 + 1)!;
    const ignored = acceptResponses(t, { a: YES, '0:a': YES, '2:a': YES, '1:c': YES }, T0 + 2);
    expect(ignored).toEqual({ task: undefined, accepted: 0 });
    const partial = acceptResponses(t, { '1:a': YES, nope: YES }, T0 + 2);
    expect(partial.accepted).toBe(1);
    expect(partial.task).toMatchObject({ status: 'input_required', responses: { '1:a': YES } });
    expect(Object.keys(partial.task!.inputRequests!)).toEqual(['1:b']);
    expect(acceptResponses(partial.task!, { '1:a': { action: 'decline' } }, T0 + 3).task).toBeUndefined(); // answered
    const done = acceptResponses(partial.task!, { '1:b': YES }, T0 + 3);
    expect(done.task).toMatchObject({ status: 'working', responses: { '1:a': YES, '1:b': YES } });
    expect(Object.hasOwn(done.task!, 'inputRequests')).toBe(false);
  });

  it('takeResponses: once the round is answered, the responses by the handler keys, the task without them', () => {
    const asked = askInput(fresh(), { confirm: ELICIT }, T0 + 1)!;
    expect(takeResponses(asked, T0 + 2)).toBeUndefined(); // not answered yet
    const answered = acceptResponses(asked, { '1:confirm': YES }, T0 + 2).task!;
    const taken = takeResponses(answered, T0 + 3)!;
    expect({ ...taken.responses }).toEqual({ confirm: YES });
    expect(Object.getPrototypeOf(taken.responses)).toBeNull();
    expect(taken.task).toMatchObject({ status: 'working', rev: answered.rev + 1, round: 1 });
    expect(Object.hasOwn(taken.task, 'responses')).toBe(false);
    expect(takeResponses(taken.task, T0 + 4)).toBeUndefined(); // taken once
  });

  it('wire keys are unique across rounds when the handler reuses its keys, and map back only in their round', () => {
    let t = fresh();
    const seen: string[] = [];
    for (let i = 0; i < 12; i++) {
      t = askInput(t, { confirm: ELICIT, 'x:y': ELICIT }, T0 + i)!;
      const keys = Object.keys(t.inputRequests!);
      seen.push(...keys);
      expect(keys.map((k) => handlerKey(t.round, k))).toEqual(['confirm', 'x:y']);
      t = acceptResponses(t, { [keys[0]!]: YES, [keys[1]!]: YES }, T0 + i).task!;
      const taken = takeResponses(t, T0 + i)!;
      expect({ ...taken.responses }).toEqual({ confirm: YES, 'x:y': YES });
      t = taken.task;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(handlerKey(1, '11:confirm')).toBeUndefined();
    expect(handlerKey(11, '1:1:confirm')).toBeUndefined();
    expect(handlerKey(1, '1:1:confirm')).toBe('1:confirm');
    expect(handlerKey(2, '1:confirm')).toBeUndefined();
    expect(handlerKey(1, 'confirm')).toBeUndefined();
  });

  it('a response of a superseded round is ignored, and one of an earlier round never reaches the work', () => {
    const r1 = askInput(fresh(), { a: ELICIT }, T0)!;
    const r2 = askInput(r1, { a: ELICIT }, T0 + 1)!; // the work asked again before an answer
    expect(acceptResponses(r2, { '1:a': YES }, T0 + 2).task).toBeUndefined();
    const stale = {
      ...r2,
      status: 'working' as const,
      inputRequests: undefined,
      responses: { '1:a': YES, '2:a': YES },
    };
    expect({ ...takeResponses(stale, T0 + 3)!.responses }).toEqual({ a: YES });
  });
});

describe('cancel, finish, lease', () => {
  it('requestCancel is idempotent and leaves the status to the work', () => {
    const c = requestCancel(fresh(), T0 + 1)!;
    expect(c).toMatchObject({ status: 'working', cancelRequested: true, rev: 1 });
    expect(requestCancel(c, T0 + 2)).toBeUndefined();
  });

  it('finish clears the round and sets the result, the error (its message as the status message) or a message', () => {
    const asked = askInput(fresh(), { a: ELICIT }, T0, 'waiting')!;
    const done = finish(asked, { status: 'completed', result: { content: [], isError: true } }, T0 + 1)!;
    expect(done).toMatchObject({ status: 'completed', result: { content: [], isError: true } });
    for (const k of ['inputRequests', 'responses', 'statusMessage', 'error'])
      expect(Object.hasOwn(done, k)).toBe(false);
    const failed = finish(asked, { status: 'failed', error: { code: -32000, message: 'boom' } }, T0 + 1)!;
    expect(failed).toMatchObject({
      status: 'failed',
      statusMessage: 'boom',
      error: { code: -32000, message: 'boom' },
    });
    const worded = finish(
      asked,
      { status: 'failed', error: { code: 1, message: 'm' }, statusMessage: 's' },
      T0,
    )!;
    expect(worded.statusMessage).toBe('s');
    expect(finish(asked, { status: 'cancelled', statusMessage: 'by the user' }, T0)!.statusMessage).toBe(
      'by the user',
    );
    expect(Object.hasOwn(finish(asked, { status: 'cancelled' }, T0)!, 'statusMessage')).toBe(false);
  });

  it('renewLease moves the lease and sets the status message only while working', () => {
    const r = renewLease(fresh(), 'w1', T0 + 99_000, T0 + 5, '40 %')!;
    expect(r).toMatchObject({ leaseUntil: T0 + 99_000, statusMessage: '40 %' });
    const asked = askInput(fresh(), { a: ELICIT }, T0, 'waiting')!;
    expect(renewLease(asked, 'w1', T0 + 99_000, T0 + 5, '40 %')!.statusMessage).toBe('waiting');
    expect(Object.hasOwn(renewLease(fresh(), 'w1', T0 + 1, T0)!, 'statusMessage')).toBe(false);
  });

  it('lapse fails a task whose lease ran out with the stable reason task_worker_lost', () => {
    const t = fresh();
    expect(lapse(t, t.leaseUntil)).toBeUndefined();
    const lost = lapse(t, t.leaseUntil + 1)!;
    expect(lost).toMatchObject({
      status: 'failed',
      error: { code: -32603, data: { reason: 'task_worker_lost' } },
    });
    expect(lost.error).toEqual(WORKER_LOST_ERROR);
    expect(lost.error).not.toBe(WORKER_LOST_ERROR);
    expect(Object.isFrozen(WORKER_LOST_ERROR)).toBe(true);
  });
});

describe('wire shapes', () => {
  const TASK_KEYS = ['taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs'];

  it.each(STATUSES)(
    'CreateTaskResult of a %s task: flat, resultType task, the Task fields only',
    (status) => {
      const t = { ...inStatus(status), requestState: 'x' } as StoredTask;
      const r = createTaskResult(t);
      expect(r.resultType).toBe('task');
      const keys = Object.keys(r).filter((k) => k !== 'statusMessage');
      expect(keys.sort()).toEqual(['resultType', ...TASK_KEYS].sort());
      for (const k of [
        'result',
        'error',
        'inputRequests',
        'requestState',
        'task',
        'responses',
        'owner',
        'rev',
      ])
        expect(Object.hasOwn(r, k)).toBe(false);
      expect(r).toMatchObject({ taskId: 't1', status });
      expect(r.createdAt).toMatch(ISO);
      expect(r.lastUpdatedAt).toMatch(ISO);
      expect(new Date(r.createdAt as string).getTime()).toBe(t.createdAt);
      expect(new Date(r.lastUpdatedAt as string).getTime()).toBe(t.updatedAt);
      expect(Number.isInteger(r.ttlMs)).toBe(true);
      expect(Number.isInteger(r.pollIntervalMs)).toBe(true);
    },
  );

  it('CreateTaskResult of a new task, exactly', () => {
    expect(createTaskResult(fresh())).toEqual({
      resultType: 'task',
      taskId: 't1',
      status: 'working',
      createdAt: '2026-07-28T12:00:00.000Z',
      lastUpdatedAt: '2026-07-28T12:00:00.000Z',
      ttlMs: 60_000,
      pollIntervalMs: 1000,
    });
  });

  const EXTRA: Record<TaskStatus, string[]> = {
    working: [],
    input_required: ['inputRequests'],
    completed: ['result'],
    failed: ['error'],
    cancelled: [],
  };
  it.each(STATUSES)('DetailedTask of a %s task: the Task and its payload, no resultType', (status) => {
    const t = inStatus(status);
    const d = detailedTask(t);
    const keys = Object.keys(d).filter((k) => k !== 'statusMessage');
    expect(keys.sort()).toEqual([...TASK_KEYS, ...EXTRA[status]].sort());
    if (status === 'input_required') expect(d.inputRequests).toEqual({ '1:confirm': ELICIT });
    if (status === 'completed') expect(d.result).toEqual(t.result);
    if (status === 'failed') expect(d.error).toEqual({ code: -32000, message: 'boom', data: { x: 1 } });
  });

  it('DetailedTask lists every outstanding request and only those; its inputRequests is a copy', () => {
    const t = askInput(fresh(), { a: ELICIT, b: ELICIT, c: ELICIT }, T0)!;
    const partial = acceptResponses(t, { '1:b': YES }, T0).task!;
    const d = detailedTask(partial);
    expect(Object.keys(d.inputRequests as JsonObject)).toEqual(['1:a', '1:c']);
    delete (d.inputRequests as JsonObject)['1:a'];
    expect(Object.keys(partial.inputRequests!)).toEqual(['1:a', '1:c']);
    expect(detailedTask({ ...partial, statusMessage: 'waiting' }).statusMessage).toBe('waiting');
  });
});

describe('readTaskParams', () => {
  it.each([
    ['tasks/get', undefined],
    ['tasks/get', {}],
    ['tasks/get', { taskId: '' }],
    ['tasks/get', { taskId: 5 }],
    ['tasks/cancel', { taskId: null }],
    ['tasks/cancel', { taskId: ['a'] }],
    ['tasks/update', { taskId: 'a' }],
    ['tasks/update', { taskId: 'a', inputResponses: [] }],
    ['tasks/update', { taskId: 'a', inputResponses: 'x' }],
    ['tasks/update', { taskId: 'a', inputResponses: null }],
    ['tasks/update', { inputResponses: {} }],
  ])('%s %j: invalid params', (method, params) => {
    const r = readTaskParams(method, params as JsonObject | undefined);
    expect(r).toMatchObject({
      ok: false,
      reason: 'invalid_task_params',
      message: expect.stringContaining(method),
    });
  });

  it('reads the taskId of get and cancel (a long one too: it is unknown, not invalid)', () => {
    expect(readTaskParams('tasks/get', { taskId: 'abc' })).toEqual({ ok: true, taskId: 'abc' });
    expect(readTaskParams('tasks/cancel', { taskId: 'abc', extra: 1 })).toEqual({ ok: true, taskId: 'abc' });
    const long = 'x'.repeat(MAX_TASK_ID_LENGTH + 1);
    expect(readTaskParams('tasks/get', { taskId: long })).toEqual({ ok: true, taskId: long });
  });

  it('tasks/update: the object responses, others dropped, on a map without a prototype', () => {
    const given = JSON.parse(
      '{"1:a": {"action": "accept"}, "1:b": 5, "1:c": null, "1:d": [], "__proto__": {"x": 1}}',
    );
    const r = readTaskParams('tasks/update', { taskId: 't', inputResponses: given });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.getPrototypeOf(r.inputResponses)).toBeNull();
    expect(Object.keys(r.inputResponses!)).toEqual(['1:a', '__proto__']);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('declaresTasks', () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ extensions: {} }, false],
    [{ extensions: { [TASKS_EXTENSION]: true } }, false],
    [{ extensions: { [TASKS_EXTENSION]: [] } }, false],
    [{ extensions: [] }, false],
    [{ tasks: {} }, false],
    [{ extensions: { [TASKS_EXTENSION]: {} } }, true],
    [{ extensions: { [TASKS_EXTENSION]: { x: 1 } }, other: 1 }, true],
  ])('%j → %s', (caps, expected) => {
    expect(declaresTasks(caps as JsonObject | undefined)).toBe(expected);
  });

  it('the -32021 data names the extension, frozen', () => {
    expect(TASKS_REQUIRED_CAPABILITIES).toEqual({ extensions: { 'io.modelcontextprotocol/tasks': {} } });
    expect(Object.isFrozen(TASKS_REQUIRED_CAPABILITIES.extensions)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties over random histories

type Step =
  | { kind: 'ask'; keys: string[] }
  | { kind: 'answer'; keys: string[]; pickOutstanding: boolean }
  | { kind: 'take' }
  | { kind: 'cancel' }
  | { kind: 'renew'; worker: string }
  | { kind: 'finish'; status: 'completed' | 'failed' | 'cancelled' }
  | { kind: 'lapse'; afterLease: boolean };

const handlerKeys = fc.array(fc.constantFrom('a', 'b', 'confirm', '1:a', 'x:y', '2', '__proto__'), {
  minLength: 1,
  maxLength: 3,
});
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('ask' as const), keys: handlerKeys }),
  fc.record({
    kind: fc.constant('answer' as const),
    keys: fc.array(fc.constantFrom('1:a', '2:a', '1:b', 'a', '3:confirm', '0:a'), { maxLength: 3 }),
    pickOutstanding: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('take' as const) }),
  fc.record({ kind: fc.constant('cancel' as const) }),
  fc.record({ kind: fc.constant('renew' as const), worker: fc.constantFrom('w1', 'w2') }),
  fc.record({
    kind: fc.constant('finish' as const),
    status: fc.constantFrom('completed', 'failed', 'cancelled'),
  }),
  fc.record({ kind: fc.constant('lapse' as const), afterLease: fc.boolean() }),
);

/** Apply one step; `given` is what was offered to acceptResponses (for the properties to check). */
function apply(
  t: StoredTask,
  s: Step,
  now: number,
): { next: StoredTask | undefined; given?: Record<string, JsonObject> } {
  switch (s.kind) {
    case 'ask':
      return { next: askInput(t, Object.fromEntries(s.keys.map((k) => [k, ELICIT])), now) };
    case 'answer': {
      const outstanding = s.pickOutstanding ? Object.keys(t.inputRequests ?? {}).slice(0, 1) : [];
      const given = Object.fromEntries([...s.keys, ...outstanding].map((k) => [k, YES]));
      return { next: acceptResponses(t, given, now).task, given };
    }
    case 'take':
      return { next: takeResponses(t, now)?.task };
    case 'cancel':
      return { next: requestCancel(t, now) };
    case 'renew':
      return { next: renewLease(t, s.worker, now + 15_000, now) };
    case 'finish':
      return {
        next: finish(
          t,
          s.status === 'completed'
            ? { status: 'completed', result: { content: [] } }
            : s.status === 'failed'
              ? { status: 'failed', error: { code: -32000, message: 'x' } }
              : { status: 'cancelled' },
          now,
        ),
      };
    case 'lapse':
      return { next: lapse(t, s.afterLease ? t.leaseUntil + 1 : t.leaseUntil) };
  }
}

describe('properties', () => {
  it('acceptResponses accepts exactly the given keys that are outstanding, and nothing else', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        let t = fresh();
        let now = T0;
        for (const s of steps) {
          now += 7;
          const { next, given } = apply(t, s, now);
          if (given !== undefined) {
            const outstanding = t.status === 'input_required' ? Object.keys(t.inputRequests ?? {}) : [];
            const expected = Object.keys(given).filter((k) => outstanding.includes(k));
            const r = acceptResponses(t, given, now);
            expect(r.accepted).toBe(expected.length);
            if (next) {
              const before = Object.keys(t.responses ?? {});
              const added = Object.keys(next.responses ?? {}).filter((k) => !before.includes(k));
              expect(added.sort()).toEqual(expected.sort());
              const left = Object.keys(next.inputRequests ?? {});
              expect(left.sort()).toEqual(outstanding.filter((k) => !expected.includes(k)).sort());
              expect(next.status).toBe(left.length === 0 ? 'working' : 'input_required');
            } else expect(expected).toEqual([]);
          }
          if (next) t = next;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a terminal task never changes; every write is rev + 1; an input_required task has outstanding requests', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        let t = fresh();
        let now = T0;
        for (const s of steps) {
          now += 7;
          const { next } = apply(t, s, now);
          if (isTerminal(t.status)) expect(next).toBeUndefined();
          if (!next) continue;
          expect(next.rev).toBe(t.rev + 1);
          expect(next.updatedAt).toBeGreaterThanOrEqual(t.updatedAt);
          if (next.status === 'input_required')
            expect(Object.keys(next.inputRequests ?? {}).length).toBeGreaterThan(0);
          else expect(next.inputRequests).toBeUndefined();
          if (isTerminal(next.status)) expect(next.responses).toBeUndefined();
          t = next;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('wire keys never repeat over a task life, and map back to the handler key only in their own round', () => {
    fc.assert(
      fc.property(fc.array(handlerKeys, { minLength: 1, maxLength: 15 }), (rounds) => {
        let t = fresh();
        const seen = new Set<string>();
        for (const keys of rounds) {
          t = askInput(t, Object.fromEntries(keys.map((k) => [k, ELICIT])), T0)!;
          for (const w of Object.keys(t.inputRequests!)) {
            expect(seen.has(w)).toBe(false);
            seen.add(w);
            expect(keys).toContain(handlerKey(t.round, w));
            for (let r = 0; r <= rounds.length + 1; r++)
              if (r !== t.round) expect(handlerKey(r, w)).toBeUndefined();
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

/**
 * createTurnBatch: with no call under way an item goes at once; while one is, the items of one event-loop turn
 * go out together, one call per group (at most `max` items each); every caller gets its own part of the answer
 * or the call's error.
 */
import { createTurnBatch } from '../../../middleware/limits/turn-batch';

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

function recorder(
  answer: (items: readonly string[]) => Promise<readonly string[]> = async (items) =>
    items.map((i) => `ok ${i}`),
) {
  const calls: string[][] = [];
  const batch = createTurnBatch<string, string>({
    groupOf: (item) => item.split(':')[0]!,
    max: 3,
    send: (items) => {
      calls.push([...items]);
      return answer(items);
    },
  });
  return { batch, calls };
}

describe('createTurnBatch', () => {
  test('with no call under way an item is sent at once', async () => {
    const { batch, calls } = recorder();
    const first = batch.add('a:1');
    expect(calls).toEqual([['a:1']]);
    await expect(first).resolves.toBe('ok a:1');
    const second = batch.add('a:2');
    expect(calls).toEqual([['a:1'], ['a:2']]);
    await second;
  });

  test('while a call is under way, the items of a turn go in one call per group, each getting its answer', async () => {
    const { batch, calls } = recorder();
    const answers = Promise.all(['x:0', 'a:1', 'b:1', 'a:2'].map((i) => batch.add(i)));
    expect(calls).toEqual([['x:0']]);
    await expect(answers).resolves.toEqual(['ok x:0', 'ok a:1', 'ok b:1', 'ok a:2']);
    expect(calls).toEqual([['x:0'], ['a:1', 'a:2'], ['b:1']]);
  });

  test('more than max items of a group are sent as several calls, in order', async () => {
    const { batch, calls } = recorder();
    const items = ['a:0', 'a:1', 'a:2', 'a:3', 'a:4', 'a:5', 'a:6', 'a:7'];
    await expect(Promise.all(items.map((i) => batch.add(i)))).resolves.toEqual(items.map((i) => `ok ${i}`));
    expect(calls).toEqual([['a:0'], ['a:1', 'a:2', 'a:3'], ['a:4', 'a:5', 'a:6'], ['a:7']]);
  });

  test('items of a later turn go in a later call', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const { batch, calls } = recorder(async (items) => {
      await held;
      return items.map((i) => `ok ${i}`);
    });
    const first = [batch.add('a:0'), batch.add('a:1')];
    await nextTurn();
    const second = batch.add('a:2');
    await nextTurn();
    release();
    await Promise.all([...first, second]);
    expect(calls).toEqual([['a:0'], ['a:1'], ['a:2']]);
  });

  test('a failed call rejects its own items only', async () => {
    const { batch } = recorder(async (items) => {
      if (items[0]!.startsWith('bad')) throw new Error('down');
      return items.map(() => 'fine');
    });
    const first = batch.add('good:0');
    const bad = batch.add('bad:1');
    const bad2 = batch.add('bad:2');
    const good = batch.add('good:1');
    await expect(first).resolves.toBe('fine');
    await expect(bad).rejects.toThrow('down');
    await expect(bad2).rejects.toThrow('down');
    await expect(good).resolves.toBe('fine');
  });

  test('a send that throws, or answers with the wrong count, rejects every item of its call', async () => {
    const throwing = createTurnBatch<string, string>({
      groupOf: () => '',
      max: 10,
      send: () => {
        throw new Error('sync');
      },
    });
    await expect(throwing.add('x')).rejects.toThrow('sync');
    // The failed call is over: the next item goes at once again.
    await expect(throwing.add('y')).rejects.toThrow('sync');
    const short = recorder(async () => ['one']);
    const all = [short.batch.add('a:0'), short.batch.add('a:1'), short.batch.add('a:2')];
    await expect(all[0]).resolves.toBe('one');
    for (const p of all.slice(1)) await expect(p).rejects.toThrow('1 answers for 2 items');
  });
});

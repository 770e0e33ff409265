/**
 * Which members of a handler object are routable: the methods it and its classes define, never `constructor`,
 * never a built-in prototype's members, and exactly the HANDLER_METHODS list when it has one.
 */
import { EventEmitter } from 'node:events';
import { HANDLER_METHODS } from '../../../core/contract';
import { buildTable } from '../../../middleware/dispatch/route-table';

const fn = () => ({});

class Base {
  list() {
    return 'base';
  }
  shared() {
    return 'base';
  }
}
class Derived extends Base {
  override shared() {
    return 'derived';
  }
  call() {
    return 'derived';
  }
}
class WithGetter {
  getterCalls = 0;
  get computed(): () => unknown {
    this.getterCalls++;
    return fn;
  }
}
class OnMap extends Map<string, unknown> {
  mine() {
    return 'mine';
  }
}
class OnEmitter extends EventEmitter {
  mine() {
    return 'mine';
  }
}
class Listed {
  readonly [HANDLER_METHODS] = ['list'];
  list() {
    return 'listed';
  }
  helper() {
    return 'helper';
  }
}

const NAMES = Object.getOwnPropertyNames(Object.prototype);
const FUNCTION_NAMES = Object.getOwnPropertyNames(Function.prototype);

describe('buildTable: routable members', () => {
  test.each<[string, object, string[], string[]]>([
    ['an object literal', { list: fn, n: 1 }, ['list'], ['n', ...NAMES]],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { list: fn }), ['list'], NAMES],
    ['a class instance', new Base(), ['list', 'shared'], NAMES],
    ['a subclass instance', new Derived(), ['list', 'shared', 'call'], NAMES],
    // An own data property that is not a function hides the inherited method of that name.
    [
      'an instance whose own field shadows a method',
      Object.assign(new Base(), { list: 5 }),
      ['shared'],
      ['list'],
    ],
    ['a class on Map', new OnMap(), ['mine'], ['get', 'set', 'delete', 'clear', 'has', 'forEach', ...NAMES]],
    ['a class on EventEmitter', new OnEmitter(), ['mine'], ['emit', 'on', 'removeAllListeners', ...NAMES]],
    [
      'an object on Function.prototype',
      Object.assign(Object.create(Function.prototype) as object, { list: fn }),
      ['list'],
      FUNCTION_NAMES,
    ],
    ['an object on an object literal', Object.create({ list: fn }) as object, ['list'], NAMES],
    ['a HANDLER_METHODS list', new Listed(), ['list'], ['helper', ...NAMES]],
  ])('%s', (_what, handler, routable, unroutable) => {
    const t = buildTable({ x: handler });
    for (const m of routable) expect([m, t.has('x', m)]).toEqual([m, true]);
    for (const m of unroutable) expect([m, t.has('x', m)]).toEqual([m, false]);
  });

  test('the nearest definition answers, called on the instance', () => {
    const d = new Derived();
    const t = buildTable({ x: d });
    const b = t.get('x', 'shared')!;
    expect(b.self).toBe(d);
    expect(b.fn.call(b.self, {}, {} as never)).toBe('derived');
    expect(t.get('x', 'list')!.fn.call(d, {}, {} as never)).toBe('base');
  });

  test("a prototype's getter is not run to build the table; an own getter is read", () => {
    const g = new WithGetter();
    expect(buildTable({ x: g }).has('x', 'computed')).toBe(false);
    expect(g.getterCalls).toBe(0);
    const own = {
      get computed() {
        return fn;
      },
    };
    expect(buildTable({ x: own }).has('x', 'computed')).toBe(true);
  });
});

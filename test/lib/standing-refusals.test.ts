/**
 * StandingRefusals (lib/limits): the keys a limiter knows to be refused until a time, bounded in number, and
 * which limits refuse until their window ends.
 */
import { StandingRefusals, refusesUntilWindowEnds } from '../../lib/limits';

describe('StandingRefusals', () => {
  test('a key is refused until its time, then forgotten', () => {
    const s = new StandingRefusals(10);
    s.set('a', 'rpm', 1000, 0);
    expect(s.get('a', 999)).toEqual({ reason: 'rpm', until: 1000 });
    expect(s.get('b', 999)).toBeUndefined();
    expect(s.get('a', 1000)).toBeUndefined();
    expect(s.size).toBe(0);
  });

  test('setting a key again replaces its entry', () => {
    const s = new StandingRefusals(10);
    s.set('a', 'rpm', 1000, 0);
    s.set('a', 'cost_budget', 5000, 10);
    expect(s.get('a', 2000)).toEqual({ reason: 'cost_budget', until: 5000 });
    expect(s.size).toBe(1);
  });

  test('a set drops the ended entries at the front, up to the first live one', () => {
    const s = new StandingRefusals(10);
    s.set('a', 'rpm', 100, 0);
    s.set('b', 'rpm', 200, 0);
    s.set('c', 'cost_budget', 10_000, 0);
    s.set('d', 'rpm', 150, 0);
    s.set('e', 'rpm', 1000, 300);
    // a and b ended and were at the front; c is live and stops the walk, d (ended) stays until a get or a later set.
    expect(s.size).toBe(3);
    expect(s.get('d', 300)).toBeUndefined();
    expect(s.size).toBe(2);
  });

  test('never more than maxKeys: the oldest entry goes', () => {
    const s = new StandingRefusals(3);
    for (let i = 0; i < 100; i++) s.set(`k${i}`, 'rpm', 60_000, i);
    expect(s.size).toBe(3);
    expect(s.get('k96', 100)).toBeUndefined();
    expect(s.get('k97', 100)).toBeDefined();
    expect(s.get('k99', 100)).toBeDefined();
  });
});

test('the minute and the budget refuse until their window ends; concurrency does not', () => {
  expect(refusesUntilWindowEnds('rpm')).toBe(true);
  expect(refusesUntilWindowEnds('cost_budget')).toBe(true);
  expect(refusesUntilWindowEnds('user_concurrent')).toBe(false);
  expect(refusesUntilWindowEnds('global_concurrent')).toBe(false);
});

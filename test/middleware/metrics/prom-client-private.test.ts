/**
 * What middleware/metrics/tally.ts reads of prom-client that prom-client does not document: a metric's series
 * live in the object under its own `hashMap` property; counting and reading keep that object, and a reset (the
 * metric's or the registry's) replaces it. A tally notices a reset by that replacement. This test fails on a
 * prom-client that keeps its series otherwise: tally.ts must then follow it.
 */
import { Counter, Gauge, Registry } from 'prom-client';

type Store = Record<string, { labels: Record<string, string>; value: number }>;
const store = (m: object): unknown => (m as { hashMap?: unknown }).hashMap;

describe.each([
  [
    'Counter',
    (registry: Registry) =>
      new Counter({ name: 'c_total', help: 'c', labelNames: ['l'], registers: [registry] }),
  ],
  [
    'Gauge',
    (registry: Registry) => new Gauge({ name: 'g', help: 'g', labelNames: ['l'], registers: [registry] }),
  ],
] as const)('prom-client %s: hashMap, as tally.ts reads it', (_kind, make) => {
  it('is an own object holding the series by label set', async () => {
    const registry = new Registry();
    const metric = make(registry);
    expect(Object.hasOwn(metric, 'hashMap')).toBe(true);
    const before = store(metric);
    expect(typeof before).toBe('object');
    expect(before).not.toBeNull();
    metric.inc({ l: 'a' }, 2);
    const values = Object.values(store(metric) as Store);
    expect(values).toEqual([expect.objectContaining({ labels: { l: 'a' }, value: 2 })]);
  });

  it('counting, setting and reading keep the same object', async () => {
    const registry = new Registry();
    const metric = make(registry);
    const before = store(metric);
    metric.inc({ l: 'a' });
    metric.inc({ l: 'b' }, 3);
    if (metric instanceof Gauge) metric.set({ l: 'a' }, 7);
    await metric.get();
    await registry.metrics();
    await registry.getMetricsAsJSON();
    expect(store(metric)).toBe(before);
  });

  it("the metric's reset and the registry's replace it", () => {
    const registry = new Registry();
    const metric = make(registry);
    metric.inc({ l: 'a' });
    const first = store(metric);
    metric.reset();
    const second = store(metric);
    expect(second).not.toBe(first);
    expect(typeof second).toBe('object');
    registry.resetMetrics();
    expect(store(metric)).not.toBe(second);
  });
});

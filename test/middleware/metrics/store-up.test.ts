/**
 * `m.storeUp(store, up)`: the `mcp_store_up{store}` gauge an application's health check sets for its shared
 * stores; no series until reported, bounded store names.
 */
import { Registry } from 'prom-client';
import { metrics } from '../../../middleware/metrics/index';

async function series(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith('mcp_store_up{'));
}

describe('metrics: storeUp', () => {
  test('1 while a store answers, 0 while its fallback is in use; unreported stores have no series', async () => {
    const registry = new Registry();
    const m = metrics({ registry });
    expect(await series(registry)).toEqual([]);
    m.storeUp('limits', true);
    expect(await series(registry)).toEqual(['mcp_store_up{store="limits"} 1']);
    m.storeUp('limits', false);
    m.storeUp('changes', true);
    expect(await series(registry)).toEqual([
      'mcp_store_up{store="limits"} 0',
      'mcp_store_up{store="changes"} 1',
    ]);
  });

  test('other store names and non-boolean states are ignored', async () => {
    const registry = new Registry();
    const m = metrics({ registry });
    (m.storeUp as (s: string, up: unknown) => void)('__proto__', true);
    (m.storeUp as (s: string, up: unknown) => void)('limits', 'yes');
    expect(await series(registry)).toEqual([]);
  });
});

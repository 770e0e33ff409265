/**
 * Issue 36, legacy notifications across replicas: two demos share a redis-server (and the requestState keys that
 * sign sessions). The official SDK 1.x client's GET stream is open on replica A while its POSTs go to replica B:
 * the `resources/subscribe` B answers reaches A through the Redis change feed's channel, so the update the
 * `note` call on B announces arrives on A's stream.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type RunningDemo, startDemo } from '../support/demo';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const KEYS = `demo:sha256:${sha('demo-token')}:users`;
const STATE_KEY = 'cd'.repeat(32);

redisDescribe({ ownServer: true })('legacy subscriptions across two demos sharing a redis-server', () => {
  let redis: RedisServer;
  let a: RunningDemo;
  let b: RunningDemo;
  beforeAll(async () => {
    redis = await startRedis({ ownServer: true });
    const env = { MCP_API_KEYS: KEYS, MCP_REQUEST_STATE_KEYS: STATE_KEY, REDIS_URL: redis.url };
    [a, b] = await Promise.all([startDemo(env), startDemo(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
  });

  test('subscribed on replica B, the update reaches the GET stream open on replica A', async () => {
    let streamOpen!: (status: number) => void;
    const opened = new Promise<number>((r) => (streamOpen = r));
    // The GET stream goes to A, every POST to B.
    const routed: typeof fetch = async (input, init) => {
      if ((init?.method ?? 'GET') === 'GET') {
        const res = await fetch(a.url, init);
        streamOpen(res.status);
        return res;
      }
      return fetch(b.url, init);
    };
    const client = new Client({ name: 'legacy-notify-replicas', version: '1.0.0' }, { capabilities: {} });
    let updated!: (uri: string) => void;
    const update = new Promise<string>((r) => (updated = r));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated(n.params.uri));
    const transport = new StreamableHTTPClientTransport(new URL(b.url), {
      requestInit: { headers: { Authorization: 'Bearer demo-token' } },
      fetch: routed,
    });
    await client.connect(transport);
    expect(await opened).toBe(200);
    await client.subscribeResource({ uri: 'notes://today' });
    const r = await client.callTool({ name: 'note', arguments: { text: 'across replicas' } });
    expect(r.isError).toBeFalsy();
    // Resolves when the update arrived on A's stream; the test's own timeout is the bound.
    await expect(update).resolves.toBe('notes://today');
    await client.close();
  });
});

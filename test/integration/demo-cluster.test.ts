/**
 * The demo with REDIS_URL pointing at one node of a Redis Cluster (three masters, each with a replica, on
 * loopback: test/support/redis-cluster.ts): it finds the cluster at start-up and talks to it through a cluster
 * client, so two demo processes share one per-user limit, the notes are shared, and no command is refused with
 * CROSSSLOT (nor does the limits' Redis store fall back to memory).
 */
import { createHash } from 'node:crypto';
import { McpTestClient } from '../../testing/index';
import { type DemoProcess, spawnDemo } from '../support/demo-process';
import { type RedisCluster, startRedisCluster } from '../support/redis-cluster';
import { redisDescribe } from '../support/redis';

jest.setTimeout(120_000);

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
/** Two users: `limited` spends its minute's requests, `writer` writes notes. */
const KEYS = `limited:sha256:${sha('limited-token')}:users,writer:sha256:${sha('writer-token')}:users`;
const as = (d: DemoProcess, token: string): McpTestClient =>
  new McpTestClient(d.url, { headers: { Authorization: `Bearer ${token}` }, autoParamHeaders: false });

redisDescribe({ ownServer: true })('two demo processes on one node of a Redis Cluster', () => {
  let cluster: RedisCluster;
  let demos: DemoProcess[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster();
    const env = {
      REDIS_URL: `redis://127.0.0.1:${cluster.nodes[0]!.port}`,
      MCP_RPM: '4',
      MCP_API_KEYS: KEYS,
    };
    demos = await Promise.all([spawnDemo(env), spawnDemo(env)]);
  }, 120_000);
  afterAll(async () => {
    for (const d of demos) d.kill();
    await cluster?.stop();
  }, 60_000);

  test('the per-user limit is shared: 4 requests a minute across both, the rest 429', async () => {
    const [a, b] = demos.map((d) => as(d, 'limited-token'));
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await a!.callTool('hello', { who: 'a' })).status);
      statuses.push((await b!.callTool('hello', { who: 'b' })).status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  });

  test('the notes are shared: a note written on A is read on B', async () => {
    const [a, b] = demos.map((d) => as(d, 'writer-token'));
    const w = await a!.callTool('note', { text: 'on the cluster' });
    expect(w.body.result).toMatchObject({ structuredContent: { noted: 'on the cluster' } });
    expect(w.body.result.isError).toBeFalsy();
    const read = await b!.readResource('notes://today');
    expect(read.body.result.contents[0].text).toBe('on the cluster\n');
  });

  test('no CROSSSLOT, no fallback to memory, and /readyz 200', async () => {
    for (const d of demos) {
      expect(d.output()).not.toMatch(/CROSSSLOT|MOVED|Redis unavailable/);
      expect((await fetch(`${d.base}/readyz`)).status).toBe(200);
    }
  });
});

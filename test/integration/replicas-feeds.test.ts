/**
 * Two demo processes on one redis-server act as one server for change feeds: a note written on A reaches a
 * `subscriptions/listen` stream held by B within a second, exactly once, and B reads the same text.
 */
import { McpTestClient } from '../../testing/index';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';
import { type Stream, envelope, modernHeaders, openStream } from '../support/streaming';
import { type DemoProcess, spawnDemo } from '../support/demo-process';

const AUTH = { Authorization: 'Bearer demo-token' };
const SUB = 'io.modelcontextprotocol/subscriptionId';

let redis: RedisServer;
const children: DemoProcess[] = [];
const streams: Stream[] = [];

async function listenOn(url: string, id: string): Promise<Stream> {
  const message = {
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { resourceSubscriptions: ['notes://today'] }, _meta: envelope() },
  };
  const st = await openStream(url, message, { ...modernHeaders('subscriptions/listen'), ...AUTH });
  streams.push(st);
  expect(st.status).toBe(200);
  expect((await st.next()).method).toBe('notifications/subscriptions/acknowledged');
  return st;
}

/** `p`, or a rejection naming `what` once `ms` have passed. */
function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The resources/updated notifications a stream received so far. */
function updates(st: Stream): number {
  return st.text().split('notifications/resources/updated').length - 1;
}

beforeAll(async () => {
  redis = await startRedis({ ownServer: true });
});
afterAll(async () => {
  for (const s of streams) s.close();
  for (const c of children) c.kill();
  await redis.stop();
});

redisDescribe({ ownServer: true })('two demo processes sharing one Redis', () => {
  let a: string;
  let b: string;
  beforeAll(async () => {
    // A redis-server of this file's own: the notes start empty.
    const env = { REDIS_URL: redis.url };
    const demos = await Promise.all([spawnDemo(env), spawnDemo(env)]);
    children.push(...demos);
    [a, b] = demos.map((d) => d.url) as [string, string];
  }, 40_000);

  test('a note written on A reaches a listen stream on B within a second, once; B reads it', async () => {
    const onB = await listenOn(b, 'b-1');
    const onA = await listenOn(a, 'a-1');
    // The subscriber connections of both processes are up before the note is written.
    await new Promise((r) => setTimeout(r, 300));
    const ca = new McpTestClient(a, { headers: AUTH });
    const written = Date.now();
    const r = await ca.callTool('note', { text: 'buy milk' });
    expect(r.status).toBe(200);
    expect(r.body.result.isError).toBeFalsy();
    const got = await within(1000 - (Date.now() - written), onB.next(), "the update on B's stream");
    expect(got).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'notes://today', _meta: { [SUB]: 'b-1' } },
    });
    expect((await within(1000, onA.next(), "the update on A's stream")).method).toBe(
      'notifications/resources/updated',
    );
    const read = await new McpTestClient(b, { headers: AUTH }).readResource('notes://today');
    expect(read.body.result.contents[0].text).toContain('buy milk');

    // A note written on B: each stream hears of each note once, whichever process wrote it.
    await new McpTestClient(b, { headers: AUTH }).callTool('note', { text: 'call Ada' });
    await within(1000, onA.next(), "the second update on A's stream");
    await within(1000, onB.next(), "the second update on B's stream");
    await new Promise((r) => setTimeout(r, 300));
    expect([updates(onA), updates(onB)]).toEqual([2, 2]);
    const again = await ca.readResource('notes://today');
    expect(again.body.result.contents[0].text).toMatch(/buy milk[\s\S]*call Ada/);
  }, 20_000);
});

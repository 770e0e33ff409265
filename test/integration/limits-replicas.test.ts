/**
 * Two server processes sharing one Redis enforce one set of limits; a replica killed while holding slots does
 * not keep them past the lease.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { type RedisServer, redisDescribe, startRedis } from '../support/redis';
import { post, tally, until } from '../support/limits-harness';

const ROOT = path.resolve(__dirname, '../..');
// node --import tsx runs the fixture in this one process (the tsx CLI would put a second process under it, and
// killing the CLI would leave the server running).
const NODE_ARGS = ['--import', 'tsx'];
const FIXTURE = path.join(__dirname, '../support/limits-server.ts');

let redis: RedisServer;
const children: ChildProcess[] = [];

interface Replica {
  port: number;
  proc: ChildProcess;
}

function spawnReplica(config: object): Promise<Replica> {
  const proc = spawn(process.execPath, [...NODE_ARGS, FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, LIMITS_FIXTURE: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve({ port: (JSON.parse(line) as { port: number }).port, proc });
    });
    proc.on('exit', (code) => reject(new Error(`replica exited (${code}) before listening: ${err}`)));
  });
}

function get(port: number, p: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
        let s = '';
        res.on('data', (d: Buffer) => (s += d.toString()));
        res.on('end', () => resolve(s));
      })
      .on('error', reject);
  });
}
const admitted = async (r: Replica): Promise<number> =>
  (JSON.parse(await get(r.port, '/stats')) as { admitted: number }).admitted;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await redis?.stop();
});

const prefix = () => redis.prefix('replicas');
const describeWithRedis = redisDescribe();

describeWithRedis('two server processes sharing one Redis: concurrency', () => {
  let a: Replica;
  let b: Replica;
  beforeAll(async () => {
    const config = {
      redisUrl: redis.url,
      keyPrefix: prefix(),
      limits: { perUserConcurrency: 3, globalConcurrency: 5 },
    };
    [a, b] = await Promise.all([spawnReplica(config), spawnReplica(config)]);
  }, 30_000);

  it('exact counts: N slots for a user across both replicas', async () => {
    // 12 held requests for one user, alternating between the replicas: exactly 3 are admitted in all.
    const pending = Array.from({ length: 12 }, (_, i) =>
      post(i % 2 ? a.port : b.port, { user: 'x', hold: 'gate' }),
    );
    let refused = 0;
    pending.forEach((p) => p.then((r) => r.status === 429 && refused++));
    await until(async () => (await admitted(a)) + (await admitted(b)) + refused === 12, 'all decided');
    expect((await admitted(a)) + (await admitted(b))).toBe(3);
    await get(a.port, '/release');
    await get(b.port, '/release');
    const rs = await Promise.all(pending);
    expect(tally(rs)).toEqual({ 200: 3, 429: 9 });
    expect(
      rs
        .filter((r) => r.status === 429)
        .every((r) => (r.json().error?.data as { limit: string }).limit === 'user_concurrent'),
    ).toBe(true);
  });

  it('exact counts: N global slots across both replicas', async () => {
    const before = (await admitted(a)) + (await admitted(b));
    const pending = Array.from({ length: 16 }, (_, i) =>
      post(i % 2 ? a.port : b.port, { user: `g${i % 8}`, hold: 'gate' }),
    );
    let refused = 0;
    pending.forEach((p) => p.then((r) => r.status === 429 && refused++));
    await until(
      async () => (await admitted(a)) + (await admitted(b)) - before + refused === 16,
      'all decided',
    );
    expect((await admitted(a)) + (await admitted(b)) - before).toBe(5);
    await get(a.port, '/release');
    await get(b.port, '/release');
    expect(tally(await Promise.all(pending))).toEqual({ 200: 5, 429: 11 });
  });
});

describeWithRedis('two server processes sharing one Redis: requests per minute', () => {
  it('exact counts: 40 parallel requests across both replicas, 10 allowed → exactly 10 pass', async () => {
    const config = { redisUrl: redis.url, keyPrefix: prefix(), limits: { perUserRpm: 10 } };
    const [a, b] = await Promise.all([spawnReplica(config), spawnReplica(config)]);
    const rs = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(i % 2 ? a.port : b.port, { user: 'x' })),
    );
    expect(tally(rs)).toEqual({ 200: 10, 429: 30 });
    // The replicas' own counts agree: 10 handled in all (the limit is shared, not split or doubled).
    expect((await admitted(a)) + (await admitted(b))).toBe(10);
  }, 30_000);
});

describeWithRedis('a replica killed while holding slots', () => {
  it('does not keep them past the lease', async () => {
    const config = {
      redisUrl: redis.url,
      keyPrefix: prefix(),
      slotLeaseMs: 3000,
      limits: { perUserConcurrency: 2 },
    };
    const [doomed, survivor] = await Promise.all([spawnReplica(config), spawnReplica(config)]);
    const held = [
      post(doomed.port, { user: 'k', hold: 'gate' }),
      post(doomed.port, { user: 'k', hold: 'gate' }),
    ];
    held.forEach((p) => p.catch(() => {}));
    await until(async () => (await admitted(doomed)) === 2, 'both slots taken');
    expect((await post(survivor.port, { user: 'k' })).status).toBe(429);
    doomed.proc.kill('SIGKILL');
    await new Promise((r) => doomed.proc.once('exit', r));
    // Right after the crash the slots are still held (they are leases, not released by anyone)...
    expect((await post(survivor.port, { user: 'k' })).status).toBe(429);
    // ...and they lapse on their own.
    await until(async () => (await post(survivor.port, { user: 'k' })).status === 200, 'slots lapsed');
  }, 30_000);
});

/**
 * A real Redis Cluster for tests: three masters, each with a replica, on random free 127.0.0.1 ports (six
 * `redis-server --cluster-enabled yes` processes, joined by `redis-cli --cluster create`), ready when
 * `startRedisCluster()` resolves; a master can be killed (SIGKILL) and its replica's promotion awaited.
 *
 *   const cluster = await startRedisCluster();
 *   const client = new Redis.Cluster(cluster.startupNodes, { redisOptions: redisClientOptions, ... });
 *   await cluster.killMasterOf('some-key');   // its replica takes over
 *   await cluster.stop();                     // in afterAll
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { redisServerPath } from './redis';
import { freePort } from './ports';

const run = promisify(execFile);

export interface ClusterNode {
  readonly port: number;
  readonly proc: ChildProcess;
}

export interface RedisCluster {
  readonly startupNodes: { host: string; port: number }[];
  readonly nodes: readonly ClusterNode[];
  /** The port of the master serving `key`'s hash slot. */
  masterOf(key: string): Promise<number>;
  /** SIGKILL the master serving `key`'s slot, and wait until its replica serves the slot (`cluster_state:ok`). */
  killMasterOf(key: string): Promise<{ killed: number; promoted: number }>;
  /** Kill every node and remove their files. Safe to call twice. */
  stop(): Promise<void>;
}

/** Cluster ports: a node also listens on its port + 10000 (the cluster bus), so both must be free. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p + 10000 > 65535) continue;
    const bus = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(p + 10000, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (bus) return p;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    timeout: 10_000,
  });
  return stdout;
}

async function waitFor(what: string, limitMs: number, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Every live node says `cluster_state:ok` and agrees that every slot is served. */
async function clusterOk(ports: readonly number[]): Promise<boolean> {
  for (const p of ports) {
    const info = await cli(p, 'cluster', 'info');
    if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
  }
  return true;
}

/** Start the cluster. Throws when redis-server is not installed. */
export async function startRedisCluster(): Promise<RedisCluster> {
  const bin = redisServerPath();
  if (!bin) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)');
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpware-redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const dead = new Set<number>();
  const stop = async (): Promise<void> => {
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.proc.exitCode !== null || n.proc.signalCode !== null) return resolve();
            n.proc.once('exit', () => resolve());
            n.proc.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
    process.off('exit', onExit);
  };
  // Should the test process end without stop() (a crash, a killed run), the nodes go with it.
  const onExit = (): void => {
    for (const n of nodes) n.proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  try {
    for (let i = 0; i < 6; i++) {
      const port = await clusterPort();
      const proc = spawn(
        bin,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '1000',
          // A replica takes over however long its link was down (the test kills its master on purpose).
          '--cluster-replica-validity-factor',
          '0',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
          '--protected-mode',
          'no',
          '--loglevel',
          'warning',
        ],
        { stdio: 'ignore' },
      );
      nodes.push({ port, proc });
    }
    const ports = nodes.map((n) => n.port);
    await waitFor('the nodes to answer PING', 10_000, async () => {
      for (const p of ports) if (!(await cli(p, 'ping')).includes('PONG')) return false;
      return true;
    });
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((p) => `127.0.0.1:${p}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    await waitFor('cluster_state:ok', 30_000, () => clusterOk(ports));
    // Every replica in sync with its master, so that it can take over.
    await waitFor('the replicas to sync', 30_000, async () => {
      let up = 0;
      for (const p of ports)
        if ((await cli(p, 'info', 'replication')).includes('master_link_status:up')) up++;
      return up === 3;
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const live = () => nodes.filter((n) => !dead.has(n.port)).map((n) => n.port);
  const masterOf = async (key: string): Promise<number> => {
    const slot = Number((await cli(live()[0]!, 'cluster', 'keyslot', key)).trim());
    const lines = (await cli(live()[0]!, 'cluster', 'nodes')).split('\n');
    for (const line of lines) {
      const f = line.split(' ');
      if (!f[2]?.includes('master') || f[2].includes('fail')) continue;
      for (const range of f.slice(8)) {
        const [lo, hi] = range.split('-').map(Number);
        if (slot >= lo! && slot <= (hi ?? lo)!) return Number(f[1]!.split(':')[1]!.split('@')[0]);
      }
    }
    throw new Error(`redis cluster: no master serves slot ${slot}`);
  };
  return {
    startupNodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    nodes,
    masterOf,
    async killMasterOf(key) {
      const killed = await masterOf(key);
      const node = nodes.find((n) => n.port === killed)!;
      await new Promise<void>((resolve) => {
        node.proc.once('exit', () => resolve());
        node.proc.kill('SIGKILL');
      });
      dead.add(killed);
      let promoted = 0;
      await waitFor('the replica to be promoted', 60_000, async () => {
        if (!(await clusterOk(live()))) return false;
        promoted = await masterOf(key);
        return promoted !== killed;
      });
      return { killed, promoted };
    },
    stop,
  };
}

/** Options of an ioredis Cluster client as the limits want them: no offline queue, no waiting. */
export function clusterClient(
  cluster: RedisCluster,
  redisOptions: Record<string, unknown>,
): InstanceType<typeof Redis.Cluster> {
  const c = new Redis.Cluster(cluster.startupNodes, {
    redisOptions,
    enableOfflineQueue: false,
    enableReadyCheck: true,
    clusterRetryStrategy: () => 100,
  });
  c.on('error', () => {});
  return c;
}

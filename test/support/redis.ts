/**
 * Redis for tests, decided once per test file:
 *   - REDIS_URL set: the tests use that Redis, each under key prefixes of its own, deleted at `stop()`;
 *   - else a `redis-server` on PATH: started on a random free 127.0.0.1 port with no persistence, able to be
 *     killed and started again on the same port, or frozen and thawed (outage tests);
 *   - else the suites are skipped (one line per run says what to install, see redis-run-teardown.cjs), except
 *     under CI=true, where `startRedis()` throws so that CI never passes without them.
 *
 *   const describeWithRedis = redisDescribe();
 *   describeWithRedis('…', () => {
 *     beforeAll(async () => (redis = await startRedis()));
 *     const client = new Redis(redis.url, redisClientOptions);
 *     const keyPrefix = redis.prefix('t');
 *     ...
 *     await redis.stop();    // in afterAll
 *   });
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';
import { redisClientOptions } from '../../lib/limits';
import { freePort } from './ports';

/** What to do about a missing Redis, in every message that reports one. */
export const REDIS_HINT = 'install redis-server (apt install redis-server) or set REDIS_URL';

/** Where skipped files are noted for the run's one summary line (set by redis-run-setup.cjs). */
const SKIPS_DIR_VARIABLE = 'MCPWARE_REDIS_SKIPS';

export interface RedisServer {
  /** `redis://…`: REDIS_URL, or `redis://127.0.0.1:<port>` of the server started for the test file. */
  readonly url: string;
  /** Whether the server process is running (always true for REDIS_URL). */
  readonly running: boolean;
  /**
   * A key prefix no other test uses (`mcpware-test:<tag>:<random>`); on REDIS_URL its keys are deleted at
   * `stop()`.
   */
  prefix(tag: string): string;
  /** Keys matching this glob pattern belong to the test: on REDIS_URL they are deleted at `stop()`. */
  ownKeys(pattern: string): void;
  /** Kill the server with SIGKILL (a crash: no shutdown, no save) and wait for it to exit. */
  kill(): Promise<void>;
  /** Start it again on the same port (after `kill()`); resolves once it answers PING. */
  restart(): Promise<void>;
  /** Freeze the server (SIGSTOP): connections stay open but nothing is answered, like a black-holed network. */
  pause(): void;
  /** Let a paused server run again (SIGCONT); it then answers what it received meanwhile. */
  resume(): void;
  /** Stop it for good (SIGKILL; nothing is persisted) or, on REDIS_URL, delete the test's keys. Safe twice. */
  stop(): Promise<void>;
}

export interface RedisNeeds {
  /** The tests kill, restart or freeze the server: REDIS_URL (a shared Redis) does not serve them. */
  ownServer?: boolean;
}

/** The redis-server binary on PATH, or undefined when there is none. */
export function redisServerPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const redisUrl = (needs: RedisNeeds): string | undefined =>
  needs.ownServer ? undefined : process.env.REDIS_URL?.trim() || undefined;

/** Whether tests with these needs can reach a Redis in this run. */
export function redisAvailable(needs: RedisNeeds = {}): boolean {
  return redisUrl(needs) !== undefined || redisServerPath() !== undefined;
}

/** Note a skipped file for the run's summary line (one file, one note, however often it asks). */
function noteSkipped(): void {
  const dir = process.env[SKIPS_DIR_VARIABLE];
  const testPath = expect.getState().testPath;
  if (!dir || !testPath) return;
  const name = createHash('sha256').update(testPath).digest('hex').slice(0, 32);
  writeFileSync(path.join(dir, name), testPath);
}

/** Whether tests with these needs run: a Redis is reachable, or CI=true (where `startRedis()` fails loudly). */
export function redisWanted(needs: RedisNeeds = {}): boolean {
  return redisAvailable(needs) || process.env.CI === 'true';
}

/**
 * `describe` when tests with these needs run ({@link redisWanted}); otherwise `describe.skip`, with the file
 * noted for the run's summary line. Call it at collection time.
 */
export function redisDescribe(needs: RedisNeeds = {}): jest.Describe {
  if (redisWanted(needs)) return describe;
  noteSkipped();
  return describe.skip;
}

/** Send PING over a raw socket; true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    let buf = '';
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.includes('\r\n')) done(buf.startsWith('+PONG'));
    });
  });
}

function waitExit(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once('exit', () => resolve()));
}

async function launch(bin: string, port: number): Promise<ChildProcess> {
  const proc = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'no',
      '--loglevel',
      'warning',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`redis-server exited during start (port ${port}): ${stderr || 'no output'}`);
    }
    if (await ping(port)) return proc;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      await waitExit(proc);
      throw new Error(`redis-server did not answer PING on port ${port} within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Keys matching these patterns, deleted from a shared Redis (REDIS_URL) when the test file is done. */
async function deleteKeys(url: string, patterns: readonly string[]): Promise<void> {
  if (patterns.length === 0) return;
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    await client.connect();
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        if (keys.length > 0) await client.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    client.disconnect();
  }
}

function keyTracker(): Pick<RedisServer, 'prefix' | 'ownKeys'> & { patterns: string[] } {
  const patterns: string[] = [];
  return {
    patterns,
    ownKeys: (pattern) => void patterns.push(pattern),
    prefix(tag) {
      const p = `mcpware-test:${tag}:${randomBytes(6).toString('hex')}`;
      patterns.push(`${p}*`);
      return p;
    },
  };
}

/** The Redis at REDIS_URL, shared with whatever else uses it: the test's keys are deleted at `stop()`. */
function sharedRedis(url: string): RedisServer {
  const keys = keyTracker();
  const refuse = (): never => {
    throw new Error('this test needs a redis-server of its own, not the shared one at REDIS_URL');
  };
  let stopped = false;
  return {
    url,
    running: true,
    prefix: keys.prefix,
    ownKeys: keys.ownKeys,
    kill: async () => refuse(),
    restart: async () => refuse(),
    pause: refuse,
    resume: refuse,
    async stop() {
      if (stopped) return;
      stopped = true;
      await deleteKeys(url, keys.patterns);
    },
  };
}

/**
 * The Redis for a test file: REDIS_URL when set (unless the tests need a server of their own), else a
 * redis-server started on a random free loopback port. Throws, with what to install, when there is neither.
 */
export async function startRedis(needs: RedisNeeds = {}): Promise<RedisServer> {
  const url = redisUrl(needs);
  if (url) return sharedRedis(url);
  const bin = redisServerPath();
  if (!bin) {
    const ci = process.env.CI === 'true' ? ' (CI=true: the Redis tests must run, not be skipped)' : '';
    throw new Error(
      `redis-server not found on PATH${ci}; ${needs.ownServer ? 'install redis-server (apt install redis-server)' : REDIS_HINT}`,
    );
  }
  let proc: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      proc = await launch(bin, port);
      break;
    } catch (e) {
      if (attempt >= 4) throw e; // the port may have been taken between freePort() and the start: retry
    }
  }
  let current: ChildProcess | undefined = proc;
  const kill = async (): Promise<void> => {
    const p = current;
    current = undefined;
    if (!p) return;
    p.kill('SIGKILL');
    await waitExit(p);
  };
  const keys = keyTracker();
  return {
    url: `redis://127.0.0.1:${port}`,
    prefix: keys.prefix,
    ownKeys: keys.ownKeys,
    get running() {
      return current !== undefined && current.exitCode === null && current.signalCode === null;
    },
    kill,
    pause() {
      current?.kill('SIGSTOP');
    },
    resume() {
      current?.kill('SIGCONT');
    },
    async restart() {
      await kill();
      // The old socket may linger a moment in the kernel; retry the bind for a while.
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          current = await launch(bin, port);
          return;
        } catch (e) {
          if (Date.now() > deadline) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    stop: kill,
  };
}

/**
 * An ioredis client on `url` made with `redisClientOptions` (and `overrides`), its errors swallowed (the tests
 * check outcomes, not the client's log), resolved once it is ready.
 */
export async function connectRedis(url: string, overrides: RedisOptions = {}): Promise<Redis> {
  const c = new Redis(url, { ...redisClientOptions, ...overrides });
  c.on('error', () => {});
  if (c.status !== 'ready') await new Promise((r) => c.once('ready', r));
  return c;
}

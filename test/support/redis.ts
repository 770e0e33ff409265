/**
 * A real `redis-server` for tests: started on a random free 127.0.0.1 port with no persistence, ready when
 * `startRedis()` resolves, and able to be killed and started again on the same port, or frozen and thawed
 * (outage tests).
 *
 *   const redis = await startRedis();
 *   const client = new Redis(redis.url, redisClientOptions);
 *   ...
 *   await redis.kill();      // SIGKILL, as a crash
 *   await redis.restart();   // same port, empty data set
 *   await redis.stop();      // in afterAll
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

export interface RedisServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Whether the server process is running. */
  readonly running: boolean;
  /** Kill the server with SIGKILL (a crash: no shutdown, no save) and wait for it to exit. */
  kill(): Promise<void>;
  /** Start it again on the same port (after `kill()`); resolves once it answers PING. */
  restart(): Promise<void>;
  /** Freeze the server (SIGSTOP): connections stay open but nothing is answered, like a black-holed network. */
  pause(): void;
  /** Let a paused server run again (SIGCONT); it then answers what it received meanwhile. */
  resume(): void;
  /** Stop it for good (SIGKILL; nothing is persisted anyway). Safe to call twice. */
  stop(): Promise<void>;
}

/** The redis-server binary, or undefined when it is not installed. */
export function redisServerPath(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/** A free TCP port on 127.0.0.1 (bound and released; a start on it retries if someone took it meanwhile). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
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

/** Start a redis-server on a random free loopback port. Throws when redis-server is not installed. */
export async function startRedis(): Promise<RedisServer> {
  const bin = redisServerPath();
  if (!bin)
    throw new Error(
      'redis-server is not installed (Debian: apt-get install redis-server; .ci/run installs it)',
    );
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
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
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

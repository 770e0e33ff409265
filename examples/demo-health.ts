/**
 * The demo's shared stores' health, for `/readyz` and `mcp_store_up`: with REDIS_URL, whether the limits'
 * Redis store and the notes' change feed work, checked every second and on demand. While one does not, the
 * replica is degraded: its limits are this process's own (fail-open) or its announcements reach its own listen
 * streams only, and `/readyz` answers 503 so that the load balancer sends the traffic to replicas that are whole.
 */
import type { Request, Response } from 'express';
import type { Cluster, Redis } from 'ioredis';

/** How often the stores are checked, in ms. */
const CHECK_INTERVAL_MS = 1000;
/**
 * A limits store error this recent keeps the limits degraded even though Redis answers PING (the store's own
 * commands fail). Older errors are not held against it: without traffic no new error can show the contrary, and
 * a replica taken out of the pool gets no traffic.
 */
const ERROR_WINDOW_MS = 5000;

export type StoreName = 'limits' | 'changes';

export interface StoreHealth {
  /** The limits' `hooks.onStoreError`: a store call failed. */
  onStoreError(): void;
  /** The stores failing now (empty when whole, or without Redis). */
  failing(): StoreName[];
  /** `GET /readyz`: 503 `{"status":"degraded","failing":[…]}` while a store fails, else `next` (the dispatcher's). */
  readiness(next: (req: Request, res: Response) => void): (req: Request, res: Response) => void;
  /** Check now (start-up waits for the first check). */
  check(): Promise<void>;
  close(): void;
}

export interface StoreHealthOptions {
  redis: Redis | Cluster | undefined;
  /** Whether the change feed is subscribed and able to publish (undefined: no shared feed). */
  feedConnected: () => boolean | undefined;
  /** Told each store's state after every check (the metrics' `storeUp`). */
  report?: (store: StoreName, up: boolean) => void;
}

export function storeHealth(o: StoreHealthOptions): StoreHealth {
  let lastError = -Infinity;
  let pingOk = true;
  let failing: StoreName[] = [];
  let running: Promise<void> | undefined;

  const evaluate = (): void => {
    if (!o.redis) return;
    const limitsUp = pingOk && Date.now() - lastError > ERROR_WINDOW_MS;
    const feed = o.feedConnected();
    failing = [...(limitsUp ? [] : ['limits' as const]), ...(feed === false ? ['changes' as const] : [])];
    o.report?.('limits', limitsUp);
    if (feed !== undefined) o.report?.('changes', feed);
  };

  const check = (): Promise<void> => {
    if (!o.redis) return Promise.resolve();
    // PING fails at once while the connection is down and after the client's command timeout while Redis hangs.
    running ??= o.redis.ping().then(
      () => void (pingOk = true),
      () => void (pingOk = false),
    );
    return running.then(() => {
      running = undefined;
      evaluate();
    });
  };

  const timer = o.redis ? setInterval(() => void check(), CHECK_INTERVAL_MS) : undefined;
  timer?.unref();

  return {
    onStoreError() {
      lastError = Date.now();
      if (!failing.includes('limits')) evaluate();
    },
    failing: () => failing,
    readiness: (next) => (req, res) => {
      if (failing.length === 0) return next(req, res);
      res.statusCode = 503;
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Cache-Control', 'no-store');
      res.end(JSON.stringify({ status: 'degraded', failing }));
    },
    check,
    close: () => clearInterval(timer),
  };
}

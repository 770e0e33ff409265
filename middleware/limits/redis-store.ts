/**
 * The limits store in Redis, shared by every replica that uses the same Redis and key prefix: one script call
 * admits a request, one more releases it (shared by the releases of a turn that may wait); on a Redis Cluster
 * the global concurrency slot is a call of its own.
 * @see docs/middleware/limits.md
 */
import { McpwareError } from '../../lib/errors.js';
import type { LimitReason } from '../../lib/limits.js';
import { log } from '../../core/log.js';
import type { Logger } from '../../core/types.js';
import { type Script, runScript } from '../../core/redis-script.js';
import { ACQUIRE, ADMIT, GIVE_BACK, RELEASE, RENEW } from './redis-scripts.js';
import { type AdmitResult, type Held, type LimitsStore, NO_SLOTS, type StoreLimits } from './store.js';
import { createTurnBatch, type TurnBatch } from './turn-batch.js';

/**
 * The part of a Redis client the limiter uses. An ioredis `Redis` instance fits (create it with
 * `redisClientOptions`), and so does an ioredis `Cluster` (its `redisOptions` made with them, and
 * `enableOfflineQueue: false`).
 */
export interface RedisClientLike {
  /** ioredis connection status; commands are sent only while it is `ready`. */
  readonly status: string;
  /** True for an ioredis `Cluster`. */
  readonly isCluster?: boolean;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  zrem(key: string, ...members: string[]): Promise<number>;
}

export interface RedisStoreOptions {
  client: RedisClientLike;
  keyPrefix: string;
  limits: StoreLimits;
  /** Lifetime of a concurrency slot, renewed every third of it while the slot is held. */
  leaseMs: number;
  /** A renewal failed (the slots it covered may lapse). */
  onRenewError(error: Error): void;
  logger: Logger;
}

export interface RedisStore extends LimitsStore {
  readonly name: 'redis';
  admit(key: string, token: string, slots: boolean, budget?: boolean): Promise<AdmitResult>;
  release(key: string, token: string, held: Held, chargeMs: number): Promise<void>;
  /** Slots this process holds in Redis (and renews). */
  readonly slotCount: number;
}

class RedisNotReadyError extends McpwareError<'ERR_LIMITS_REDIS_NOT_READY'> {
  constructor() {
    super('ERR_LIMITS_REDIS_NOT_READY', 'Redis connection is not ready');
  }
}

/** An admission answered after the limiter gave up on it: what it took is given back, and nobody waits for it. */
class GivenUpError extends McpwareError<'ERR_LIMITS_GIVEN_UP'> {
  constructor() {
    super('ERR_LIMITS_GIVEN_UP', 'the admission was given up on before Redis answered');
  }
}

/** The Redis keys of one user: one hash tag, so that they share a cluster slot. */
interface UserKeys {
  readonly budget: string;
  readonly slots: string;
  readonly rpm: string;
}

/** One admission of a turn's script call. */
interface Admission {
  readonly keys: UserKeys;
  /** The user and global slot limits this admission checks (0: not checked). */
  readonly user: number;
  readonly global: number;
  readonly token: string;
  /** The budget is checked (false: a task's own request). */
  readonly budget: boolean;
}

/** One release: a script call of its own when it frees a set's last slot, else shared (see giveBack). */
interface Release {
  readonly keys: UserKeys;
  readonly token: string;
  readonly user: boolean;
  readonly global: boolean;
  readonly chargeMs: number;
}

/** Most requests in one script call: Redis runs scripts one at a time, so each stays short. */
const BATCH_MAX = 64;
/** Most failed admissions waiting for their slots to be given back; beyond it, their leases run out. */
const ORPHANS_MAX = 10_000;
/** How often the give-back of a failed admission is tried again while it fails (Redis unreachable). */
const ORPHAN_RETRY_MS = 1000;
/** What an admission that failed may have taken. */
const ALL_SLOTS: Held = Object.freeze({ user: true, global: true });

const REFUSALS: readonly (LimitReason | undefined)[] = [
  undefined,
  'cost_budget',
  'user_concurrent',
  'global_concurrent',
  'rpm',
];

/**
 * A Redis store. A concurrency slot is a member of a sorted set scored by its own expiry: a lease, renewed on a
 * timer while the request runs. A crashed replica's slots therefore lapse one by one and a live replica's never
 * do, which a counter with one expiry for the whole key cannot give (its count restarts at 0 while requests still
 * run, and their late releases drive it negative).
 */
export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const opts = (options.client as { options?: { enableOfflineQueue?: boolean } }).options;
  if (opts && opts.enableOfflineQueue !== false) {
    log(
      options.logger,
      'warn',
      'limits: the Redis client has its offline queue on; create it with redisClientOptions (enableOfflineQueue: false)',
    );
  }
  return new RedisSlotsStore(options);
}

class RedisSlotsStore implements RedisStore {
  readonly name = 'redis';
  private readonly client: RedisClientLike;
  private readonly prefix: string;
  private readonly leaseMs: number;
  private readonly limits: StoreLimits;
  private readonly cluster: boolean;
  private readonly globalKey: string;
  private readonly onRenewError: (e: Error) => void;
  /** The slots this process holds, per Redis key: renewed on a timer until released. */
  private readonly held = new Map<string, Set<string>>();
  private heldCount = 0;
  /** Admissions under way, and those of them released (given up on) before Redis answered. */
  private readonly pending = new Set<string>();
  private readonly cancelled = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** Admissions; those of one turn share a call while one is under way (see turn-batch.ts). */
  private readonly admissions: TurnBatch<Admission, readonly number[]>;
  /** Releases that no answer waits for, shared the same way. */
  private readonly releases: TurnBatch<Release, undefined>;
  /** Admissions that failed (token → user key), until what their script may have taken is given back. */
  private readonly orphans = new Map<string, string>();
  private orphanTimer: NodeJS.Timeout | undefined;

  constructor(o: RedisStoreOptions) {
    this.client = o.client;
    this.prefix = o.keyPrefix;
    this.leaseMs = o.leaseMs;
    this.limits = o.limits;
    this.cluster = o.client.isCluster === true;
    this.globalKey = `${o.keyPrefix}:g:{all}:slots`;
    this.onRenewError = o.onRenewError;
    // A cluster runs a script on the keys of one hash slot: there a call holds one user's requests.
    const groupOf = (x: { keys: UserKeys }): string => (this.cluster ? x.keys.slots : '');
    this.admissions = createTurnBatch<Admission, readonly number[]>({
      groupOf,
      max: BATCH_MAX,
      send: (b) => this.sendAdmissions(b),
    });
    this.releases = createTurnBatch<Release, undefined>({
      groupOf,
      max: BATCH_MAX,
      send: (b) => this.sendReleases(b),
    });
  }

  get slotCount(): number {
    return this.heldCount;
  }

  async admit(key: string, token: string, slots: boolean, budget = true): Promise<AdmitResult> {
    this.ready();
    const k = this.userKeys(key);
    const { userSlots, globalSlots } = this.limits;
    const user = slots ? userSlots : 0;
    // In a cluster the global slot lives in a hash slot of its own: a script cannot reach it with the user's.
    const global = slots && !this.cluster ? globalSlots : 0;
    const apart = slots && this.cluster && globalSlots > 0;
    this.pending.add(token);
    let verdict: AdmitResult;
    try {
      const r = await this.admissions.add({ keys: k, user, global, token, budget });
      verdict = this.verdictOf(r);
      if (apart && verdict.ok && !this.cancelled.has(token))
        verdict = await this.admitGlobal(k, token, verdict);
    } catch (e) {
      this.cancelled.delete(token);
      // The script may still run in Redis (a command timed out) or may have run (its answer was lost).
      if (slots) this.reconcile(key, token);
      throw e;
    } finally {
      this.pending.delete(token);
    }
    if (this.cancelled.delete(token)) {
      // Given up on (timeout) and released meanwhile. The release sent after this call already gave the slots
      // back, unless it ran first (the script had to be loaded: NOSCRIPT → EVAL ran after it; or it was sent in
      // the same turn, ahead of the admissions): give them back once more.
      if (verdict.ok) this.giveBack(key, token, verdict.held, 0).catch(() => {});
      throw new GivenUpError();
    }
    if (verdict.ok) {
      if (verdict.held.user) this.hold(k.slots, token);
      if (verdict.held.global) this.hold(this.globalKey, token);
    }
    return verdict;
  }

  async release(key: string, token: string, held: Held, chargeMs: number): Promise<void> {
    // Forget the slots first: a renewal that runs later must not extend them, whatever happens to the release.
    const k = this.userKeys(key);
    if (held.user) this.forget(k.slots, token);
    if (held.global) this.forget(this.globalKey, token);
    if (this.pending.has(token)) this.cancelled.add(token); // the admission has not returned: it must hold nothing
    if (!held.user && !held.global && !(chargeMs > 0)) return;
    this.ready();
    // The answer of a request that took a set's last slot waits for its release (store.ts, releaseBeforeAnswer):
    // that one goes at once; any other leaves a slot free for the caller's next request, so it may share a call.
    await this.giveBack(key, token, held, chargeMs, held.lastSlot !== true);
  }

  /**
   * The release's calls: a release script, and in a cluster a ZREM of the global slot. Unless `shared`, they
   * are sent before this returns and never queued behind another call, so that a slot is free in Redis as soon
   * as it can be; `shared`, the script joins the releases of the turn while a release call is under way.
   */
  private async giveBack(
    key: string,
    token: string,
    held: Held,
    chargeMs: number,
    shared = false,
  ): Promise<void> {
    const k = this.userKeys(key);
    const apart = this.cluster && held.global;
    const calls: Promise<unknown>[] = [];
    if (held.user || (held.global && !apart) || chargeMs > 0) {
      const global = held.global && !apart;
      const r: Release = { keys: k, token, user: held.user, global, chargeMs };
      calls.push(shared ? this.releases.add(r) : this.sendReleases([r]));
    }
    if (apart) calls.push(this.client.zrem(this.globalKey, token));
    await Promise.all(calls);
  }

  /** One admission script for a batch of admissions: four numbers of the answer per admission. */
  private async sendAdmissions(batch: readonly Admission[]): Promise<(readonly number[])[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [
      this.limits.budget?.limit ?? 0,
      this.limits.rpm?.limit ?? 0,
      (this.limits.rpm?.seconds ?? 0) * 1000,
      this.leaseMs,
    ];
    for (const a of batch) {
      keys.push(a.keys.budget, a.keys.slots, a.global ? this.globalKey : a.keys.slots, a.keys.rpm);
      args.push(a.user, a.global, a.token, a.budget ? 1 : 0);
    }
    const r = await runScript(this.client, ADMIT, keys, args);
    if (!Array.isArray(r) || r.length !== batch.length * 4)
      throw new Error('limits: unexpected answer of the admission script');
    return batch.map((_, i) => (r as number[]).slice(i * 4, i * 4 + 4));
  }

  /** One release script for a batch of releases, applied in their order. */
  private async sendReleases(batch: readonly Release[]): Promise<undefined[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [(this.limits.budget?.seconds ?? 0) * 1000];
    for (const r of batch) {
      // A cluster's user script names the user's keys only: the global slot key is in another hash slot.
      keys.push(r.keys.budget, r.keys.slots, this.cluster ? r.keys.slots : this.globalKey);
      args.push(r.token, r.user ? 1 : 0, r.global ? 1 : 0, r.chargeMs);
    }
    await runScript(this.client, RELEASE, keys, args);
    return batch.map(() => undefined);
  }

  /**
   * An admission failed (a timeout, a lost connection): its script may run in Redis after all, or may have run,
   * and nobody holds what it took. Give back, by its token, whatever it may have taken: at once on the same
   * connection (Redis runs it after the admission), and again until a give-back is answered.
   */
  private reconcile(key: string, token: string): void {
    if (this.orphans.size >= ORPHANS_MAX) return;
    this.orphans.set(token, key);
    this.giveBackOrphan(token, key);
  }

  private giveBackOrphan(token: string, key: string): void {
    if (this.client.status !== 'ready') return this.retryOrphans();
    this.giveBack(key, token, ALL_SLOTS, 0).then(
      () => this.orphans.delete(token),
      () => this.retryOrphans(),
    );
  }

  private retryOrphans(): void {
    if (this.orphanTimer) return;
    this.orphanTimer = setTimeout(() => {
      this.orphanTimer = undefined;
      for (const [token, key] of this.orphans) this.giveBackOrphan(token, key);
    }, ORPHAN_RETRY_MS);
    this.orphanTimer.unref();
  }

  /**
   * A cluster's second call: the global slot. Refused, the user's part is given back (a third call); failed, it
   * is given back too, so that the user's slot does not wait for its lease to lapse.
   */
  private async admitGlobal(
    k: UserKeys,
    token: string,
    user: AdmitResult & { readonly ok: true },
  ): Promise<AdmitResult> {
    const { held } = user;
    const args = [this.limits.globalSlots, this.leaseMs, token];
    const giveBack = () =>
      runScript(
        this.client,
        GIVE_BACK,
        [k.slots, k.rpm],
        [token, held.user ? 1 : 0, this.limits.rpm ? 1 : 0],
      );
    let taken: number;
    try {
      taken = Number(await runScript(this.client, ACQUIRE, [this.globalKey], args));
    } catch (e) {
      giveBack().catch(() => {});
      throw e;
    }
    if (taken >= 1) {
      const both: Held = { user: held.user, global: true };
      const slots = held.lastSlot || taken === 2 ? { ...both, lastSlot: true } : both;
      return { ok: true, held: slots, lastRequestMs: user.lastRequestMs };
    }
    await giveBack();
    return { ok: false, reason: 'global_concurrent', waitMs: 0 };
  }

  private verdictOf(r: unknown): AdmitResult {
    if (!Array.isArray(r)) throw new Error('limits: unexpected answer of the admission script');
    const code = Number(r[0]);
    if (code === 0) {
      const user = Number(r[1]);
      const global = Number(r[2]);
      const last = Number(r[3]);
      const lastRequestMs = last > 0 ? last : undefined;
      if (user === 0 && global === 0) return { ok: true, held: NO_SLOTS, lastRequestMs };
      const held: Held = { user: user >= 1, global: global >= 1 };
      return {
        ok: true,
        held: user === 2 || global === 2 ? { ...held, lastSlot: true } : held,
        lastRequestMs,
      };
    }
    const reason = REFUSALS[code];
    if (!reason) throw new Error('limits: unexpected answer of the admission script');
    return { ok: false, reason, waitMs: Number(r[1]) || 0 };
  }

  private userKeys(key: string): UserKeys {
    const base = `${this.prefix}:u:{${key}}`;
    return { budget: `${base}:budget`, slots: `${base}:slots`, rpm: `${base}:rpm` };
  }

  private hold(rkey: string, token: string): void {
    let set = this.held.get(rkey);
    if (!set) this.held.set(rkey, (set = new Set()));
    set.add(token);
    if (++this.heldCount === 1) this.startRenewing();
  }

  private forget(rkey: string, token: string): void {
    const set = this.held.get(rkey);
    if (!set?.delete(token)) return;
    if (set.size === 0) this.held.delete(rkey);
    if (--this.heldCount === 0) this.stopRenewing();
  }

  private ready(): void {
    if (this.client.status !== 'ready') throw new RedisNotReadyError();
  }

  private startRenewing(): void {
    const every = Math.max(Math.floor(this.leaseMs / 3), 100);
    this.timer = setInterval(() => this.renew(), every);
    this.timer.unref();
  }

  private stopRenewing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private renew(): void {
    for (const [rkey, set] of this.held) {
      const ids = [...set];
      // Chunks keep each script call short (Redis runs scripts one at a time).
      for (let i = 0; i < ids.length; i += 500) {
        this.script(RENEW, rkey, [this.leaseMs, ...ids.slice(i, i + 500)]).catch((e: unknown) =>
          this.onRenewError(e instanceof Error ? e : new Error(String(e))),
        );
      }
    }
  }

  private async script(s: Script, key: string, args: (string | number)[]): Promise<unknown> {
    this.ready();
    return runScript(this.client, s, [key], args);
  }
}

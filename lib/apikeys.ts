/**
 * API keys: hashing, hash parsing and normalization, the `MCP_API_KEYS` environment-string parser, and the
 * constant-time lookup.
 *
 * Pure: no I/O. The configuration holds SHA-256 hashes of the keys, never the keys themselves. Hashes are
 * accepted as `sha256:<64 hex digits>` or as 64 bare hex digits, in upper or lower case, and normalized to
 * lower-case bare hex. Error messages never repeat a configured value: a plaintext key pasted where a hash
 * belongs must not end up in a log or a stack trace.
 *
 * @see docs/middleware/api-key-auth.md
 */
import { hash, timingSafeEqual } from 'node:crypto';

/** The prefix of a hash in the configuration (`sha256:<hex>`). Bare hex is accepted too. */
export const HASH_PREFIX = 'sha256:';

/** SHA-256 of the key's UTF-8 bytes, computed in one call (`crypto.hash`). */
export function keyDigest(key: string): Buffer {
  return hash('sha256', key, 'buffer');
}

/**
 * The configuration line for a key: `sha256:<lower-case hex>`.
 * @see docs/middleware/api-key-auth.md
 * @example
 * ```ts
 * import { apiKeyAuth, hashKey } from 'mcpware/api-key-auth';
 *
 * app.use('/mcp', apiKeyAuth({ keys: [{ userId: 'alice', hash: hashKey(process.env.ALICE_KEY ?? '') }] }));
 * ```
 */
export function hashKey(key: string): string {
  return HASH_PREFIX + keyDigest(key).toString('hex');
}

export type KeyHashResult =
  { ok: true; hex: string; digest: Buffer } | { ok: false; reason: 'malformed_hash' };

const HEX64 = /^[0-9a-f]{64}$/i;

/** Parse a configured hash (`sha256:<hex>` or bare hex, any case). */
export function parseKeyHash(value: unknown): KeyHashResult {
  if (typeof value !== 'string') return { ok: false, reason: 'malformed_hash' };
  let hex = value.trim();
  if (hex.length > HASH_PREFIX.length && hex.slice(0, HASH_PREFIX.length).toLowerCase() === HASH_PREFIX) {
    hex = hex.slice(HASH_PREFIX.length);
  }
  if (!HEX64.test(hex)) return { ok: false, reason: 'malformed_hash' };
  hex = hex.toLowerCase();
  return { ok: true, hex, digest: Buffer.from(hex, 'hex') };
}

/**
 * Index of `digest` among `candidates`, or -1. Every candidate is compared, whatever matched and where: there
 * is no early exit, so the time taken does not tell whether a key matched nor which one. `equal` is injectable
 * so a test can count the comparisons; it defaults to `crypto.timingSafeEqual`. Candidates and digest must
 * all be 32 bytes (SHA-256), which makes every comparison the same length.
 */
export function constantTimeFind(
  digest: Uint8Array,
  candidates: readonly Uint8Array[],
  equal: (a: Uint8Array, b: Uint8Array) => boolean = timingSafeEqual,
): number {
  let found = -1;
  for (let i = 0; i < candidates.length; i++) {
    // `found` is updated without leaving the loop, by arithmetic rather than an `if`, so every entry costs the same.
    const hit = equal(digest, candidates[i]!) ? 1 : 0;
    found = hit * i + (1 - hit) * found;
  }
  return found;
}

/** One configured key, as the caller writes it. */
export interface ApiKeyConfig {
  /** Who the key belongs to: becomes `principal.userId`. */
  userId: string;
  /** SHA-256 of the key: `sha256:<hex>` or bare hex (`npx mcpware hash-key` prints it). */
  hash: string;
  /** Groups of the principal. Required and non-empty unless the authenticator allows keys without groups. */
  groups?: readonly string[];
  /** Roles of the principal. Default none. */
  roles?: readonly string[];
  /** When the key stops working: a Date, epoch milliseconds or an ISO 8601 string. Default never. */
  expiresAt?: Date | number | string;
}

/** A validated key: normalized hash, its digest, and the principal's attributes. */
export interface NormalizedKey {
  userId: string;
  hex: string;
  digest: Buffer;
  groups: readonly string[];
  roles: readonly string[];
  /** Epoch milliseconds, or `undefined` for never. */
  expiresAt?: number;
}

export type NormalizeKeysReason =
  | 'not_a_list'
  | 'not_an_object'
  | 'invalid_user_id'
  | 'malformed_hash'
  | 'duplicate_hash'
  | 'invalid_groups'
  | 'missing_groups'
  | 'invalid_roles'
  | 'invalid_expiry';

export type NormalizeKeysResult =
  | { ok: true; keys: NormalizedKey[] }
  | { ok: false; reason: NormalizeKeysReason; index: number; field: string; message: string };

/** True for a usable name (user id, group, role): non-empty, at most 256 characters, no control characters. */
export function isName(v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 256) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

function nameList(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (const x of v) {
    if (!isName(x)) return undefined;
    if (!out.includes(x)) out.push(x);
  }
  return out;
}

function expiryOf(v: Date | number | string): number | undefined {
  const t =
    v instanceof Date ? v.getTime() : typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Validate and normalize a key list. Refuses malformed hashes, duplicates (the same key twice would make the
 * principal depend on list order), bad names, and keys without groups unless `allowNoGroups`: such a key
 * authenticates and then fails every call that checks a group, which reads as a broken server rather than a
 * misconfigured key.
 */
export function normalizeKeys(list: unknown, opts: { allowNoGroups?: boolean } = {}): NormalizeKeysResult {
  if (!Array.isArray(list))
    return { ok: false, reason: 'not_a_list', index: -1, field: 'keys', message: 'must be an array' };
  const keys: NormalizedKey[] = [];
  const seen = new Map<string, number>();
  for (let i = 0; i < list.length; i++) {
    const k: unknown = list[i];
    const fail = (reason: NormalizeKeysReason, field: string, message: string): NormalizeKeysResult => ({
      ok: false,
      reason,
      index: i,
      field: `keys[${i}]${field ? '.' + field : ''}`,
      message,
    });
    if (typeof k !== 'object' || k === null || Array.isArray(k)) {
      return fail('not_an_object', '', 'must be an object { userId, hash, groups }');
    }
    const e = k as Record<string, unknown>;
    if (!isName(e.userId))
      return fail('invalid_user_id', 'userId', 'must be a non-empty string without control characters');
    const h = parseKeyHash(e.hash);
    if (!h.ok) {
      return fail(
        'malformed_hash',
        'hash',
        'must be "sha256:<64 hex digits>" or 64 hex digits (make one with `npx mcpware hash-key`); ' +
          'the value is not shown because it may be a plaintext key',
      );
    }
    const prior = seen.get(h.hex);
    if (prior !== undefined) return fail('duplicate_hash', 'hash', `is the same key as keys[${prior}]`);
    seen.set(h.hex, i);
    let groups: string[] = [];
    if (e.groups !== undefined) {
      const g = nameList(e.groups);
      if (!g) return fail('invalid_groups', 'groups', 'must be an array of non-empty strings');
      groups = g;
    }
    if (groups.length === 0 && !opts.allowNoGroups) {
      return fail(
        'missing_groups',
        'groups',
        'must name at least one group (or set allowKeysWithoutGroups: true)',
      );
    }
    let roles: string[] = [];
    if (e.roles !== undefined) {
      const r = nameList(e.roles);
      if (!r) return fail('invalid_roles', 'roles', 'must be an array of non-empty strings');
      roles = r;
    }
    const nk: NormalizedKey = { userId: e.userId, hex: h.hex, digest: h.digest, groups, roles };
    if (e.expiresAt !== undefined) {
      const t = expiryOf(e.expiresAt as Date | number | string);
      if (t === undefined)
        return fail('invalid_expiry', 'expiresAt', 'must be a Date, epoch milliseconds or an ISO 8601 date');
      nk.expiresAt = t;
    }
    keys.push(nk);
  }
  return { ok: true, keys };
}

export type ParseKeysEnvResult =
  | { ok: true; keys: ApiKeyConfig[] }
  | { ok: false; reason: 'malformed_entry' | 'malformed_hash'; entry: number; message: string };

/** Characters a user id or group may not hold in the env string (they are its separators). */
const ENV_NAME = /^[^\s:,|]{1,256}$/;

/**
 * Parse the `MCP_API_KEYS` environment string: entries `userId:hash[:group1|group2]`, separated by commas or
 * whitespace (newlines included). `hash` is `sha256:<hex>` or bare hex, so `alice:sha256:<hex>:admins` and
 * `alice:<hex>:admins` mean the same. An empty or blank string gives an empty list. Messages name the entry by
 * its position and never repeat its text.
 * @see docs/middleware/api-key-auth.md
 * @example
 * ```ts
 * import { apiKeyAuth, parseApiKeysEnv } from 'mcpware/api-key-auth';
 *
 * const parsed = parseApiKeysEnv(process.env.MCP_API_KEYS ?? '');
 * if (!parsed.ok) throw new Error(parsed.message);
 * app.use('/mcp', apiKeyAuth({ keys: parsed.keys }));
 * ```
 */
export function parseApiKeysEnv(value: string): ParseKeysEnvResult {
  const entries = value.split(/[\s,]+/).filter((s) => s.length > 0);
  const keys: ApiKeyConfig[] = [];
  for (let i = 0; i < entries.length; i++) {
    const n = i + 1;
    const parts = entries[i]!.split(':');
    // `userId:sha256:<hex>[:groups]`: rejoin the prefix with its hash.
    if (parts.length >= 3 && parts[1]!.toLowerCase() === 'sha256')
      parts.splice(1, 2, `${HASH_PREFIX}${parts[2]}`);
    if (parts.length < 2 || parts.length > 3) {
      return {
        ok: false,
        reason: 'malformed_entry',
        entry: n,
        message: `entry ${n} must be userId:sha256:<hex>[:group1|group2]`,
      };
    }
    const [userId, hash, groupText] = parts as [string, string, string | undefined];
    if (!ENV_NAME.test(userId)) {
      return {
        ok: false,
        reason: 'malformed_entry',
        entry: n,
        message: `entry ${n} has an empty or invalid user id`,
      };
    }
    if (!parseKeyHash(hash).ok) {
      return {
        ok: false,
        reason: 'malformed_hash',
        entry: n,
        message: `entry ${n} does not hold a SHA-256 hash (64 hex digits); hash the key with \`npx mcpware hash-key\``,
      };
    }
    const key: ApiKeyConfig = { userId, hash };
    if (groupText !== undefined) {
      const groups = groupText.split('|');
      if (!groups.every((g) => ENV_NAME.test(g))) {
        return {
          ok: false,
          reason: 'malformed_entry',
          entry: n,
          message: `entry ${n} has an empty or invalid group`,
        };
      }
      key.groups = groups;
    }
    keys.push(key);
  }
  return { ok: true, keys };
}

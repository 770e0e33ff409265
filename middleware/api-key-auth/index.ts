/**
 * `apiKeyAuth({ keys })`: API keys sent as `Authorization: Bearer <key>`.
 *
 * The configuration holds SHA-256 hashes of the keys, never the keys. The presented key is hashed and compared
 * with every configured hash in constant time, with no early exit, so the time taken says neither whether nor
 * which key matched. Missing or unknown key → 401 with `WWW-Authenticate: Bearer` (plus `resource_metadata`
 * when configured); an expired key → 401 `Token expired`.
 *
 * Fails fast at construction: a malformed hash, the same key twice, a key without groups (unless
 * `allowKeysWithoutGroups`), an unknown option. An empty key list is refused unless `insecureAllowEmpty` is
 * set, because a typo in a configuration must never mean "no protection".
 *
 * In an {@link authenticate} chain the authenticator recognizes only its own keys: any other credential
 * passes to the next member.
 */
import type { IncomingMessage } from 'node:http';
import {
  type ApiKeyConfig,
  type NormalizedKey,
  constantTimeFind,
  keyDigest,
  normalizeKeys,
} from '../../lib/apikeys.js';
import {
  type AuthDecision,
  type AuthMiddleware,
  type ChallengeOptions,
  chainMiddleware,
  checkKnownOptions,
  resolveChallenge,
  validateLogger,
} from '../auth/index.js';
import { badOption } from '../internal/options.js';
import type { Logger, Principal } from '../types.js';

export type { ApiKeyConfig } from '../../lib/apikeys.js';
// So `mcpware/api-key-auth` alone is enough to configure keys from the environment and to chain authenticators.
export { hashKey, parseApiKeysEnv } from '../../lib/apikeys.js';
export { authenticate } from '../auth/index.js';
export type {
  AuthDecision,
  AuthMiddleware,
  Authenticator,
  AuthenticateOptions,
  ChallengeOptions,
} from '../auth/index.js';

export interface ApiKeyAuthOptions extends ChallengeOptions {
  /** The keys: `{ userId, hash: 'sha256:<hex>', groups, roles?, expiresAt? }`. Required, non-empty. */
  keys: readonly ApiKeyConfig[];
  /** Accept keys with no groups. Default `false`: such a key authenticates and then fails every group check. */
  allowKeysWithoutGroups?: boolean;
  /**
   * Development only: accept an empty `keys` list. Alone, the middleware then lets every request through
   * without a principal; in a chain it recognizes nothing. Default `false`: an empty list throws.
   */
  insecureAllowEmpty?: boolean;
  /** Where refusals and the development-mode warning go. Default: stderr. */
  logger?: Logger;
}

export const API_KEY_METHOD = 'api-key';

const KNOWN = [
  'keys',
  'allowKeysWithoutGroups',
  'insecureAllowEmpty',
  'logger',
  'resourceMetadataUrl',
  'realm',
  'scopes',
];

function flag(factory: string, name: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw badOption(factory, name, v, 'a boolean');
  return v;
}

/**
 * API-key authentication. Returns a middleware that is also an authenticator for {@link authenticate}.
 *
 * @example
 * app.use('/mcp', apiKeyAuth({ keys: [{ userId: 'ci', hash: 'sha256:9f86…', groups: ['deploy'] }] }));
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): AuthMiddleware {
  const factory = 'apiKeyAuth';
  if (typeof options !== 'object' || options === null)
    throw badOption(factory, 'options', options, 'an object with "keys"');
  checkKnownOptions(factory, options, KNOWN);
  const allowNoGroups = flag(factory, 'allowKeysWithoutGroups', options.allowKeysWithoutGroups);
  const allowEmpty = flag(factory, 'insecureAllowEmpty', options.insecureAllowEmpty);
  if (options.keys === undefined) {
    throw new TypeError(`${factory}: option "keys" is required (an array of { userId, hash, groups })`);
  }
  const r = normalizeKeys(options.keys, { allowNoGroups });
  if (!r.ok) {
    const option = r.index < 0 ? 'keys' : r.field;
    throw new TypeError(`${factory}: option "${option}" ${r.message}`);
  }
  const keys: readonly NormalizedKey[] = r.keys;
  if (keys.length === 0 && !allowEmpty) {
    throw new TypeError(
      `${factory}: option "keys" is an empty list, which would leave the endpoint unprotected; ` +
        'pass insecureAllowEmpty: true to run without keys in development',
    );
  }
  const challenge = resolveChallenge(factory, options);
  const logger = validateLogger(factory, options.logger);

  const digests = keys.map((k) => k.digest);
  // Principals are built once per key and frozen: requests share them, and nobody downstream may edit them.
  const principals: readonly Principal[] = keys.map((k) =>
    Object.freeze({
      userId: k.userId,
      groups: Object.freeze([...k.groups]),
      roles: Object.freeze([...k.roles]),
      method: API_KEY_METHOD,
    }),
  );

  const check = (token: string, _req: IncomingMessage): AuthDecision => {
    const i = constantTimeFind(keyDigest(token), digests);
    if (i < 0) return { kind: 'pass', why: 'unknown_key' };
    const k = keys[i]!;
    if (k.expiresAt !== undefined && Date.now() >= k.expiresAt) {
      return {
        kind: 'refuse',
        outcome: 'expired',
        why: 'key_expired',
        detail: { userId: k.userId, expiresAt: new Date(k.expiresAt).toISOString() },
      };
    }
    return { kind: 'ok', principal: principals[i]! };
  };

  const self = { method: API_KEY_METHOD, by: factory, ready: Promise.resolve(), challenge, check };
  let mw;
  if (keys.length === 0) {
    try {
      logger.warn?.(
        `${factory}: no API keys configured (insecureAllowEmpty): requests pass unauthenticated`,
        {},
      );
    } catch {
      // a broken logger must not stop start-up
    }
    mw = function apiKeyAuthDisabled(
      _req: IncomingMessage,
      _res: unknown,
      next: (err?: unknown) => void,
    ): void {
      next();
    };
  } else {
    mw = chainMiddleware([self], challenge, logger, factory);
  }
  return Object.assign(mw, self) as AuthMiddleware;
}

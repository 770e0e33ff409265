/**
 * @module mcpware/api-key-auth: `apiKeyAuth({ keys })`, API keys sent as `Authorization: Bearer <key>`, checked
 * against SHA-256 hashes in constant time.
 *
 * The configuration holds hashes, never keys. The presented key is hashed and compared with every configured
 * hash, with no early exit, so the time taken says neither whether nor which key matched. Construction refuses a
 * malformed hash, the same key twice, a key without groups (unless `allowKeysWithoutGroups`) and an empty list
 * (unless `insecureAllowEmpty`): a typo in a configuration must never mean "no protection". In an
 * `authenticate` chain it recognizes only its own keys; any other credential passes to the next member.
 *
 * @see docs/middleware/api-key-auth.md
 *
 * @example
 * app.use('/mcp', apiKeyAuth({ keys: [{ userId: 'ci', hash: 'sha256:9f86…', groups: ['deploy'] }] }));
 */
import type { IncomingMessage } from 'node:http';
import {
  type ApiKeyConfig,
  type NormalizedKey,
  constantTimeFind,
  keyDigest,
  normalizeKeys,
} from '../../lib/apikeys.js';
import { type AuthDecision, type AuthMiddleware, chainMiddleware } from '../auth/chain.js';
import { CHALLENGE_OPTIONS, type ChallengeOptions, resolveChallenge } from '../auth/challenge.js';
import { escapeIdentity } from '../../lib/sanitize.js';
import { log } from '../../core/log.js';
import {
  OPTION_ERRORS,
  boolOption,
  knownKeys,
  loggerOption,
  optionError,
  optionsObject,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { Logger, Principal } from '../../core/types.js';

export type { ApiKeyConfig } from '../../lib/apikeys.js';
// So `mcpware/api-key-auth` alone is enough to configure keys from the environment and to chain authenticators.
export { hashKey, parseApiKeysEnv } from '../../lib/apikeys.js';
export { authenticate } from '../auth/index.js';

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

const FACTORY = 'apiKeyAuth';
const KNOWN = ['keys', 'allowKeysWithoutGroups', 'insecureAllowEmpty', 'logger', ...CHALLENGE_OPTIONS];

interface ApiKeyConfigResolved {
  readonly keys: readonly NormalizedKey[];
  readonly challenge: ChallengeOptions;
  readonly logger: Logger;
}

function resolveApiKeyOptions(options: ApiKeyAuthOptions | undefined): ApiKeyConfigResolved {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  const allowNoGroups = boolOption(FACTORY, 'allowKeysWithoutGroups', o.allowKeysWithoutGroups, false);
  const allowEmpty = boolOption(FACTORY, 'insecureAllowEmpty', o.insecureAllowEmpty, false);
  if (o.keys === undefined) {
    throw optionError(
      OPTION_ERRORS.missing,
      FACTORY,
      `${FACTORY}: option "keys" is required (an array of { userId, hash, groups })`,
    );
  }
  const r = normalizeKeys(o.keys, { allowNoGroups });
  if (!r.ok) {
    const option = r.index < 0 ? 'keys' : r.field;
    throw optionError(OPTION_ERRORS.invalid, FACTORY, `${FACTORY}: option "${option}" ${r.message}`);
  }
  if (r.keys.length === 0 && !allowEmpty) {
    throw optionError(
      OPTION_ERRORS.invalid,
      FACTORY,
      `${FACTORY}: option "keys" is an empty list, which would leave the endpoint unprotected; ` +
        'pass insecureAllowEmpty: true to run without keys in development',
    );
  }
  return {
    keys: r.keys,
    challenge: resolveChallenge(FACTORY, o),
    logger: loggerOption(FACTORY, o.logger, stderrLogger),
  };
}

/**
 * API-key authentication. Returns a middleware that is also an authenticator for `authenticate`.
 * @param options - {@link ApiKeyAuthOptions}
 * @see docs/middleware/api-key-auth.md
 * @example
 * ```ts
 * import { apiKeyAuth, hashKey } from 'mcpware/api-key-auth';
 *
 * const keys = [{ userId: 'alice', hash: hashKey('alice-secret-key'), groups: ['admins'] }];
 * app.use('/mcp', apiKeyAuth({ keys }));
 * ```
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): AuthMiddleware {
  const { keys, challenge, logger } = resolveApiKeyOptions(options);
  const digests = keys.map((k) => k.digest);
  // Principals are built once per key and frozen: requests share them, and nobody downstream may edit them.
  const principals: readonly Principal[] = keys.map((k) =>
    Object.freeze({
      userId: k.userId,
      groups: Object.freeze([...k.groups]),
      roles: Object.freeze([...k.roles]),
      method: API_KEY_METHOD,
      source: API_KEY_METHOD,
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
        // Escaped as the audit shows principals: no two key owners read alike in the log.
        detail: { userId: escapeIdentity(k.userId, 256), expiresAt: new Date(k.expiresAt).toISOString() },
      };
    }
    return { kind: 'ok', principal: principals[i]! };
  };

  const self = { method: API_KEY_METHOD, by: FACTORY, ready: Promise.resolve(), challenge, check };
  if (keys.length > 0) return Object.assign(chainMiddleware([self], challenge, logger, FACTORY), self);
  log(
    logger,
    'warn',
    `${FACTORY}: no API keys configured (insecureAllowEmpty): requests pass unauthenticated`,
    {},
  );
  const disabled = function apiKeyAuthDisabled(
    _req: IncomingMessage,
    _res: unknown,
    next: (err?: unknown) => void,
  ): void {
    next();
  };
  return Object.assign(disabled, self) as AuthMiddleware;
}

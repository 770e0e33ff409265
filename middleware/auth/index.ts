/**
 * @module mcpware/auth: `authenticate([...authenticators])`, one middleware that decides who is asking before
 * anything else runs; the first authenticator that recognizes the credential decides.
 *
 * @see docs/middleware/auth.md
 *
 * @example
 * app.use('/mcp', authenticate([apiKeyAuth({ keys }), oidcAuth({ issuer, audience })], { resourceMetadataUrl }));
 */
import { stderrLogger } from '../../core/respond.js';
import { OPTION_ERRORS, knownKeys, loggerOption, optionError, optionsObject } from '../../core/options.js';
import type { Logger, Middleware } from '../../core/types.js';
import { type Authenticator, chainMiddleware, isAuthenticator, quiet } from './chain.js';
import { CHALLENGE_OPTIONS, type ChallengeOptions, resolveChallenge } from './challenge.js';

export type { AuthDecision, AuthMiddleware, Authenticator, RefuseOutcome } from './chain.js';
export type { ChallengeOptions } from './challenge.js';

export interface AuthenticateOptions extends ChallengeOptions {
  /** Where refusals are logged (with what was seen) and outages reported. Default: stderr. */
  logger?: Logger;
}

/** The middleware {@link authenticate} returns: also exposes readiness and its members. */
export interface AuthenticateMiddleware extends Middleware {
  /** Settles when every member is ready; rejects when one failed to start (never unhandled). */
  readonly ready: Promise<void>;
  readonly authenticators: readonly Authenticator[];
}

const FACTORY = 'authenticate';

/**
 * Combine authenticators into one middleware: the first that recognizes the credential decides. Challenge
 * options default to those of the first member that has them.
 * @param authenticators - the members, asked in order
 * @param options - {@link AuthenticateOptions}
 * @see docs/middleware/auth.md
 * @example
 * ```ts
 * import { apiKeyAuth, authenticate } from 'mcpware/api-key-auth';
 * import { oidcAuth } from 'mcpware/oidc-auth';
 *
 * const auth = authenticate([
 *   oidcAuth({ issuer: 'https://idp.example.com', audience: 'https://mcp.example.com/mcp' }),
 *   apiKeyAuth({ keys }),
 * ]);
 * await auth.ready;
 * app.use('/mcp', auth);
 * ```
 */
export function authenticate(
  authenticators: readonly Authenticator[],
  options?: AuthenticateOptions,
): AuthenticateMiddleware {
  if (
    !Array.isArray(authenticators) ||
    authenticators.length === 0 ||
    !authenticators.every(isAuthenticator)
  ) {
    throw optionError(
      OPTION_ERRORS.invalid,
      FACTORY,
      `${FACTORY}: the first argument must be a non-empty array of authenticators (apiKeyAuth(...), oidcAuth(...)); ` +
        'did you pass the factory instead of calling it?',
    );
  }
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, [...CHALLENGE_OPTIONS, 'logger']);
  const own = resolveChallenge(FACTORY, o);
  const challenge: ChallengeOptions = {};
  const pick = <K extends keyof ChallengeOptions>(k: K): void => {
    const v = own[k] ?? authenticators.find((a) => a.challenge[k] !== undefined)?.challenge[k];
    if (v !== undefined) challenge[k] = v;
  };
  CHALLENGE_OPTIONS.forEach(pick);
  const logger = loggerOption(FACTORY, o.logger, stderrLogger);
  const members = [...authenticators];
  const mw = chainMiddleware(members, challenge, logger, FACTORY);
  const ready = quiet(Promise.all(members.map((a) => a.ready)).then(() => undefined));
  return Object.assign(mw, { ready, authenticators: members });
}

/**
 * Start-up of `oidcAuth`: OIDC discovery, then the first JWKS fetch, retried with a doubling delay when
 * `retry` asks for it. It starts when created, so the factory stays synchronous; `ready` settles when it is
 * done, and requests that arrive meanwhile wait for it (at most `readyTimeoutMs`).
 *
 * Discovery refuses a document whose `issuer` is not exactly the configured one (OIDC Discovery §4.3) and a
 * `jwks_uri` that may not be fetched (https, or http on loopback unless `allowHttp`).
 *
 * @see docs/middleware/oidc-auth.md
 */
import { type RemoteJWKSetOptions, createRemoteJWKSet, customFetch, jwksCache } from 'jose';
import { quiet } from '../auth/chain.js';
import { log } from '../../core/log.js';
import { OidcAuthError, clipValue, describeFailure } from './errors.js';
import type { JwksCache, KeySource, RemoteJWKSet } from './keys.js';
import { FACTORY, type OidcConfig, fetchableUrl, parseUrl } from './options.js';
import type { OidcPhase } from './status.js';

export interface Discovery extends KeySource {
  /** Resolves when discovery and the first JWKS fetch succeeded; rejects when start-up failed. */
  readonly ready: Promise<void>;
  readonly phase: OidcPhase;
  /** True once ready; waits while the first attempt runs, at most `readyTimeoutMs`; false otherwise. */
  whenReady(): Promise<boolean>;
  /** Stop the retries (and make `ready` reject if it has not settled). */
  close(): void;
}

function discoveryUrl(issuer: string): string {
  let end = issuer.length;
  while (end > 0 && issuer.charCodeAt(end - 1) === 0x2f) end--;
  return issuer.slice(0, end) + '/.well-known/openid-configuration';
}

/** Fetch the discovery document and return its `jwks_uri`. */
async function discover(config: OidcConfig): Promise<string> {
  const { issuer } = config;
  const url = discoveryUrl(issuer);
  const fail = (message: string): OidcAuthError =>
    new OidcAuthError('ERR_OIDC_DISCOVERY', `discovery at ${url} ${message}`);
  let res: Response;
  try {
    res = await config.fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(config.fetchTimeoutMs),
      headers: { accept: 'application/json' },
    });
  } catch (err) {
    throw fail(`failed: ${describeFailure(err)}`);
  }
  if (res.status !== 200) throw fail(`answered HTTP ${res.status}`);
  let doc: unknown;
  try {
    doc = await res.json();
  } catch (err) {
    throw fail(`did not answer JSON: ${describeFailure(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw fail('did not answer a JSON object');
  const d = doc as Record<string, unknown>;
  if (d.issuer !== issuer) {
    throw fail(`names issuer ${JSON.stringify(clipValue(d.issuer))}, expected ${JSON.stringify(issuer)}`);
  }
  const u = parseUrl(d.jwks_uri);
  if (!u || !fetchableUrl(u, config.allowHttp)) {
    throw fail(
      `has no usable jwks_uri (${JSON.stringify(clipValue(d.jwks_uri))}); https is required off loopback`,
    );
  }
  return u.href;
}

/** One start-up attempt: discovery, then the first JWKS fetch into `cache`. */
async function attempt(config: OidcConfig, cache: JwksCache): Promise<{ remote: RemoteJWKSet; uri: string }> {
  const uri = await discover(config);
  const jwksOptions: RemoteJWKSetOptions = {
    timeoutDuration: config.fetchTimeoutMs,
    cooldownDuration: config.cooldownMs,
    cacheMaxAge: config.cacheMaxAgeMs,
    [jwksCache]: cache as Record<string, never>,
  };
  if (config.jwksFetch) jwksOptions[customFetch] = config.jwksFetch;
  const remote = createRemoteJWKSet(new URL(uri), jwksOptions);
  try {
    await remote.reload();
  } catch (err) {
    throw new OidcAuthError('ERR_OIDC_JWKS', `JWKS at ${uri} could not be fetched: ${describeFailure(err)}`);
  }
  if ((remote.jwks()?.keys ?? []).length === 0) {
    throw new OidcAuthError('ERR_OIDC_JWKS', `JWKS at ${uri} holds no keys`);
  }
  return { remote, uri };
}

/** Start discovery at once; `cache` receives the key sets jose fetches. */
export function createDiscovery(config: OidcConfig, cache: JwksCache): Discovery {
  const { issuer, retry, logger } = config;
  let phase: OidcPhase = 'starting';
  let remote: RemoteJWKSet | undefined;
  let jwksUri: string | undefined;
  let closed = false;
  let cancelSleep: (() => void) | undefined;

  const closedError = (cause?: unknown): OidcAuthError => {
    phase = 'closed';
    const why = cause === undefined ? '' : ` (${cause instanceof Error ? cause.message : String(cause)})`;
    return new OidcAuthError('ERR_OIDC_CLOSED', `${FACTORY}: closed during start-up${why}`, { cause });
  };

  const start = async (): Promise<void> => {
    for (let n = 1; ; n++) {
      let failure: unknown;
      try {
        ({ remote, uri: jwksUri } = await attempt(config, cache));
      } catch (err) {
        failure = err;
      }
      if (closed) throw closedError(failure);
      if (failure === undefined) {
        phase = 'ready';
        log(logger, 'info', `${FACTORY}: ready`, { issuer, jwksUri });
        return;
      }
      const msg = failure instanceof Error ? failure.message : String(failure);
      if (!retry || n >= retry.attempts) {
        phase = 'failed';
        log(logger, 'error', `${FACTORY}: start-up failed for issuer ${issuer}: ${msg}`, {
          issuer,
          attempts: n,
        });
        const reason = `${FACTORY}: cannot start for issuer ${issuer}: ${msg}`;
        throw new OidcAuthError('ERR_OIDC_START_FAILED', reason, { cause: failure });
      }
      phase = 'retrying';
      const delay = Math.min(retry.maxDelayMs, retry.minDelayMs * 2 ** Math.min(n - 1, 30));
      const retrying = `start-up attempt ${n} failed for issuer ${issuer}: ${msg}; retrying in ${delay} ms`;
      log(logger, 'error', `${FACTORY}: ${retrying}`, { issuer, attempt: n });
      const pause = sleep(delay);
      cancelSleep = pause.cancel;
      await pause.done;
      if (closed) throw closedError();
    }
  };
  // `quiet`: whoever awaits `ready` sees the rejection; nobody awaiting it does not crash the process.
  const ready = quiet(start());

  const whenReady = async (): Promise<boolean> => {
    if (phase === 'ready') return true;
    if (phase !== 'starting') return false;
    let t: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      t = setTimeout(resolve, config.readyTimeoutMs);
      t.unref?.();
    });
    await Promise.race([ready.then(noop, noop), timeout]);
    clearTimeout(t);
    return (phase as OidcPhase) === 'ready';
  };

  return {
    ready,
    whenReady,
    get phase() {
      return phase;
    },
    get remote() {
      return remote;
    },
    get jwksUri() {
      return jwksUri;
    },
    close(): void {
      if (closed) return;
      closed = true;
      if ((phase as OidcPhase) !== 'ready') phase = 'closed';
      cancelSleep?.();
    },
  };
}

/** A pause that `cancel` ends early. Its timer does not keep a process alive that has nothing else to do. */
function sleep(ms: number): { done: Promise<void>; cancel: () => void } {
  let cancel = noop;
  const done = new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
    cancel = () => {
      clearTimeout(t);
      resolve();
    };
  });
  return { done, cancel };
}

function noop(): void {
  // The outcome is read from `phase`.
}

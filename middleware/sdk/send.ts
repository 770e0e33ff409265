/**
 * The engine's `Send` for an SDK server in the same process: a web `Request` built from the client's request
 * (its path on a local origin, the engine's headers, the message bytes, the engine's abort signal), handed to the
 * SDK with the parsed message (the SDK does not read the body again) and the caller as the SDK's `AuthInfo`.
 * What the SDK throws rejects the promise; the engine answers it as an internal error.
 */
import type { ForwardRequest, Send } from '../../core/forward.js';
import type { Principal } from '../../core/types.js';
import type { SdkAuthInfo, SdkCall, SdkRequestExtra } from './handler.js';

/** The origin of the requests built for the SDK: the server is in this process, no network is involved. */
const LOCAL_ORIGIN = 'http://localhost';

/**
 * The caller as the SDK's `AuthInfo`: never a credential (`token` is empty), the principal's id as `clientId`,
 * its roles as `scopes`, a verified token's expiry, and the principal itself under `extra.principal`.
 */
export function authInfoOf(principal: Principal): SdkAuthInfo {
  const info: SdkAuthInfo = {
    token: '',
    clientId: principal.userId,
    scopes: [...principal.roles],
    extra: { principal },
  };
  const exp = principal.claims?.exp;
  if (typeof exp === 'number' && Number.isFinite(exp)) info.expiresAt = exp;
  return info;
}

/** The web `Request` the SDK reads: same path and query, the engine's headers, body and signal. */
export function webRequestOf(request: ForwardRequest): Request {
  // Appended, not resolved: a path such as `//host/x` stays a path on the local origin.
  const path = request.req.url ?? '/';
  const url = new URL(LOCAL_ORIGIN + (path.startsWith('/') ? path : '/'));
  const init: RequestInit = { method: request.method, headers: request.headers, signal: request.signal };
  if (request.method === 'POST' && request.body !== undefined) init.body = request.body;
  return new Request(url, init);
}

/** The Send over one SDK call. */
export function sdkSend(call: SdkCall): Send {
  return async (request) => {
    const extra: SdkRequestExtra = {};
    if (request.parsedBody !== undefined) extra.parsedBody = request.parsedBody;
    if (request.principal !== undefined) extra.authInfo = authInfoOf(request.principal);
    return call(webRequestOf(request), extra);
  };
}

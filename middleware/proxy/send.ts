/**
 * The proxy's {@link Send}: one `fetch()` to the upstream per exchange. The engine's headers (the client's MCP
 * headers, allow-listed) plus the configured ones; never the client's credentials. Redirects are not followed (a
 * redirect is not an MCP answer), and a connection that cannot be made becomes `upstream_unreachable`.
 */
import type { ForwardRequest, Send } from '../../core/forward.js';
import { UpstreamError } from '../../core/upstream-error.js';
import type { ResolvedProxyOwnOptions } from './options.js';

/** Client headers that never go upstream, even if the engine's allow-list ever let them through. */
const NEVER_FORWARDED = ['authorization', 'cookie', 'proxy-authorization', 'host'] as const;

/** The Node error codes (`error.cause.code`) of a connection that could not be made or was cut. */
function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function headersFor(request: ForwardRequest, configured: ResolvedProxyOwnOptions['headers']): Headers {
  const headers = new Headers(request.headers);
  for (const name of NEVER_FORWARDED) headers.delete(name);
  for (const [name, value] of configured) headers.set(name, value);
  return headers;
}

/** The adapter for `options`: `fetch(url, …)` with `redirect: 'manual'`, errors mapped to {@link UpstreamError}. */
export function fetchSend(options: ResolvedProxyOwnOptions): Send {
  const { url, headers: configured, fetch: doFetch } = options;
  const origin = new URL(url).origin;
  return async function proxySend(request: ForwardRequest): Promise<Response> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: request.method,
        headers: headersFor(request, configured),
        body: request.method === 'POST' ? request.body : undefined,
        signal: request.signal,
        redirect: 'manual',
      });
    } catch (error) {
      // The engine aborted (client gone, its timeout, close): its own reason tells it which.
      if (request.signal.aborted) throw request.signal.reason ?? error;
      if (error instanceof UpstreamError) throw error;
      // fetch() reports a network failure as `TypeError: fetch failed` (its cause says which); the name, not
      // `instanceof`, since the global fetch may belong to another realm than this module.
      if ((error as { name?: unknown } | null)?.name === 'TypeError') {
        const code = causeCode(error) ?? String((error as Error).message);
        throw new UpstreamError('upstream_unreachable', `${origin}: ${code}`, { cause: error });
      }
      throw error;
    }
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel().catch(() => undefined);
      throw new UpstreamError('upstream_invalid', `${origin}: a redirect (${response.status})`);
    }
    return response;
  };
}

/**
 * `proxy()`: mcpware's stack in front of any MCP server over HTTP (Streamable HTTP, both eras, in any language).
 * The terminal middleware: every MCP request that reaches it is forwarded to the upstream over `node:http` (a
 * keep-alive agent of its own) or the caller's `fetch`, and the
 * answer relayed through the stack (redaction per JSON body and per SSE event, the tool filter's views, the real
 * outcome for audit and metrics). The forwarding itself is the engine's (`core/forward.ts`, shared with `sdk()`);
 * this folder is the adapter: the upstream's URL, its own credentials, and the connection's failures.
 *
 * The client's `Authorization` and `Cookie` never go upstream (the spec forbids token passthrough): the upstream
 * gets the headers configured here. The upstream's own headers do not come back (no `Set-Cookie`, no banner).
 *
 * @see docs/middleware/proxy.md
 */
import {
  FORWARD_OPTION_NAMES,
  type ForwardOptions,
  createForwarder,
  resolveForwardOptions,
} from '../../core/forward.js';
import { knownKeys, optionsObject } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';
import { PROXY_OWN_OPTION_NAMES, type ProxyFetch, checkProxyOptions } from './options.js';
import { proxyTransport } from './send.js';

export type { ProxyFetch } from './options.js';

/** The options of {@link proxy}: the upstream, its credentials, and the engine's options shared with `sdk()`. */
export interface ProxyOptions extends ForwardOptions {
  /** The upstream's MCP endpoint, `http:` or `https:`, without userinfo or fragment. Required. */
  url: string | URL;
  /**
   * Headers sent to the upstream with every request: its own credentials (`{ Authorization: 'Bearer …' }`), a
   * tenant header. Not hop-by-hop headers, `Host`, `Content-Length`, `Content-Type`, `Accept` or MCP headers.
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * The most connections to the upstream at once, kept alive between requests; more requests wait for one.
   * A stream (`subscriptions/listen`, a GET stream) gets a connection of its own, outside this bound. Default 64.
   * Not used with `fetch`.
   */
  maxSockets?: number;
  /**
   * A `fetch` used to reach the upstream instead of the built-in `node:http` / `node:https` transport (a custom
   * undici dispatcher, TLS settings, a test). Default: none.
   */
  fetch?: ProxyFetch;
}

/** The middleware {@link proxy} returns, with the engine's shutdown. */
export type ProxyMiddleware = Middleware & {
  /**
   * Aborts every exchange in flight (the upstream sees each request cancelled); resolves when they have ended,
   * with the connections to the upstream closed.
   */
  close(): Promise<void>;
};

/**
 * The proxy: the terminal middleware that forwards MCP requests to the upstream at `url`. Validates every option
 * at construction (a TypeError naming `proxy`, the option, and the closest known name for an unknown one).
 * @param options - {@link ProxyOptions}
 * @see docs/middleware/proxy.md
 * @example
 * ```ts
 * import { apiKeyAuth } from 'mcpware/api-key-auth';
 * import { compose } from 'mcpware/compose';
 * import { proxy } from 'mcpware/proxy';
 * import { redact } from 'mcpware/redact';
 *
 * const upstream = proxy({
 *   url: 'http://127.0.0.1:8080/mcp',
 *   headers: { Authorization: `Bearer ${process.env.UPSTREAM_TOKEN ?? ''}` },
 *   timeoutMs: 30_000,
 * });
 * app.use('/mcp', compose([apiKeyAuth({ keys }), redact({ mode: 'mask' }), upstream]));
 * ```
 */
export function proxy(options: ProxyOptions): ProxyMiddleware {
  const o = optionsObject('proxy', options) as unknown as Record<string, unknown>;
  knownKeys('proxy', o, [...PROXY_OWN_OPTION_NAMES, ...FORWARD_OPTION_NAMES]);
  const own = checkProxyOptions(o);
  const shared: Record<string, unknown> = {};
  for (const name of FORWARD_OPTION_NAMES) if (Object.hasOwn(o, name)) shared[name] = o[name];
  const resolved = resolveForwardOptions('proxy', shared);
  const transport = proxyTransport(own);
  const forwarder = createForwarder('proxy', transport.send, resolved);
  const handle = forwarder.handle;
  const middleware: Middleware = function mcpProxy(req, res, next) {
    handle(req, res, next);
  };
  const close = async (): Promise<void> => {
    await forwarder.close();
    transport.close();
  };
  return Object.assign(middleware, { close });
}

/**
 * `sdk()`: the stack in front of an official SDK server in the same process. The terminal middleware hands
 * each request to the SDK's web-standard face (v2 `createMcpHandler()`, a v1 `WebStandardStreamableHTTPServerTransport`,
 * or a function of your own) through the forwarding engine (core/forward.ts), which keeps the stack's promises
 * for the SDK's answers: tool views on `tools/list` and `tools/call`, redaction of every result and SSE event,
 * the real outcome for audit and metrics, cancellation when the client goes away.
 * @see docs/middleware/sdk.md
 */
import {
  FORWARD_OPTION_NAMES,
  type ForwardOptions,
  createForwarder,
  resolveForwardOptions,
} from '../../core/forward.js';
import { knownKeys, optionsObject } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';
import { type SdkHandler, callOf } from './handler.js';
import { sdkSend } from './send.js';

export type {
  SdkAuthInfo,
  SdkFetchHandler,
  SdkHandler,
  SdkHandlerFunction,
  SdkRequestExtra,
  SdkWebTransport,
} from './handler.js';

/** The options of {@link sdk}: the SDK's face, and the forwarding options `sdk()` and `proxy()` share. */
export interface SdkOptions extends ForwardOptions {
  /**
   * The SDK server: the `createMcpHandler()` result (SDK v2), a `WebStandardStreamableHTTPServerTransport` with
   * a session id generator (SDK v1), or `(request, extra) => Promise<Response>` (e.g. SDK v1 stateless, a new
   * server and transport per request, or SDK v1 with sessions, a transport per `Mcp-Session-Id`).
   */
  handler: SdkHandler;
}

/** The terminal middleware `sdk()` returns. */
export type SdkMiddleware = Middleware & {
  /** Aborts every exchange in flight (the SDK's handlers see their signal fire); resolves when they have ended. */
  close(): Promise<void>;
};

const FACTORY = 'sdk';

/**
 * Put the stack in front of an official SDK server in the same process. Validates every option at
 * construction: an unknown name is refused with a TypeError naming the closest known one, and a handler that
 * would write its answer past mcpware (a node `StreamableHTTPServerTransport`) with what to pass instead.
 * @param options - {@link SdkOptions}
 * @see docs/middleware/sdk.md
 * @example
 * ```ts
 * import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
 * import { mcpEndpoint } from 'mcpware/endpoint';
 * import { sdk } from 'mcpware/sdk';
 *
 * const handler = createMcpHandler(() => new McpServer({ name: 'shop', version: '1.0.0' }));
 * const guarded = sdk({ handler, timeoutMs: 30_000 });
 * app.use('/mcp', guarded);
 * process.on('SIGTERM', () => void guarded.close());
 * ```
 */
export function sdk(options: SdkOptions): SdkMiddleware {
  const o = optionsObject(FACTORY, options as SdkOptions | undefined) as Partial<SdkOptions>;
  knownKeys(FACTORY, o, ['handler', ...FORWARD_OPTION_NAMES]);
  const call = callOf(o.handler);
  const { handler: _handler, ...forward } = o;
  const forwarder = createForwarder(FACTORY, sdkSend(call), resolveForwardOptions(FACTORY, forward));
  const handle = forwarder.handle;
  const middleware = function mcpSdk(req, res, next) {
    handle(req, res, next);
  } as SdkMiddleware;
  middleware.close = () => forwarder.close();
  return middleware;
}

/**
 * The forwarding engine shared by `sdk()` (an official SDK server in the same process) and `proxy()` (any MCP
 * server over HTTP): the stack's promises kept for answers mcpware does not write itself.
 *
 * An adapter supplies one function, {@link Send}: it turns a {@link ForwardRequest} into a web `Response` (the
 * SDK's `fetch`, or `fetch()` to the upstream). The engine does the rest: it reads the client's request through
 * the shared parse step, applies the tool views to `tools/call` (the actual name goes upstream) and to
 * `tools/list` (filtered and renamed; paged with mcpware's own cursors when `pageSize` is set), relays the answer
 * (a JSON body, or an SSE stream event by event with backpressure) through `req.locals.outbound` (redaction),
 * records the real outcome on `req.locals.response` (audit, metrics), and turns an upstream failure into a
 * JSON-RPC error with a stable reason.
 *
 * @see docs/architecture.md
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Engine } from './forward-request.js';
import { badOption, intOption, loggerOption, knownKeys, optionsObject } from './options.js';
import { type BodyOptions, resolveBodyOptions } from './parse-step.js';
import { stderrLogger } from './respond.js';
import type { Logger, Middleware, Principal } from './types.js';

/** What the engine asks an adapter to send. */
export interface ForwardRequest {
  /** The HTTP method: POST for messages; GET (a legacy server stream) and DELETE (a legacy session's end). */
  readonly method: 'POST' | 'GET' | 'DELETE';
  /**
   * The headers for the server: the client's MCP headers (allow-listed: `Accept`, `Content-Type`,
   * `MCP-Protocol-Version`, `Mcp-Session-Id`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`, `Last-Event-ID`), with
   * `Mcp-Name` rewritten when a tool view renamed the tool. Never `Authorization`, `Cookie` or `Host`: upstream
   * credentials are the adapter's own.
   */
  readonly headers: Headers;
  /** The JSON-RPC message as bytes (POST): the body as received, or re-encoded when the engine rewrote it. */
  readonly body?: Uint8Array;
  /** The same message, parsed (for in-process servers that take a parsed body). */
  readonly parsedBody?: unknown;
  /** Aborted when the client goes away, when the request's timeout passes, or when the engine closes. */
  readonly signal: AbortSignal;
  /** The principal the stack authenticated, when one did. */
  readonly principal?: Principal;
  /** The client's request (its URL and headers as received), for adapters that build a web `Request` from it. */
  readonly req: IncomingMessage;
}

/** An adapter: send one request to the server behind mcpware and resolve with its answer. */
export type Send = (request: ForwardRequest) => Promise<Response>;

// UpstreamError is upstream-error.ts's and exported from there alone: see docs/performance.md#fast-exports
export type { UpstreamFailureReason } from './upstream-error.js';

/** The options `sdk()` and `proxy()` share, validated by {@link resolveForwardOptions}. */
export interface ForwardOptions {
  /**
   * > 0: the list methods (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`) are read
   * whole from the server (following its cursors, within `maxListPages` and `maxListItems`), filtered by the tool
   * views, and paged with mcpware's own cursors. 0 (the default): the server's pages pass through, the views
   * applied to each.
   */
  pageSize?: number;
  /** Per request, in milliseconds; not for `subscriptions/listen` or GET streams. 0 = none. Default 60000. */
  timeoutMs?: number;
  /** The largest JSON answer, or SSE event, read from the server, in bytes. Default 4 MiB. */
  maxAnswerBytes?: number;
  /** The most server pages one aggregated list reads. Default 100. */
  maxListPages?: number;
  /** The most entries one aggregated list holds. Default 10000. */
  maxListItems?: number;
  /**
   * The most streams open at once (`subscriptions/listen`, a 2025-11-25 session's GET stream): each holds a
   * connection to the server for as long as the client keeps it. Beyond it, 503. Default 1000; 0 = no streams.
   */
  maxStreams?: number;
  /** The most streams one caller holds open at once; beyond it, 429. Default 10; 0 = no per-caller bound. */
  maxStreamsPerPrincipal?: number;
  /**
   * HMAC-SHA256 keys (each at least 32 bytes) that sign the `Mcp-Session-Id` a client receives for the server's
   * session: the first signs, all verify (rotation). Default: one random key per instance, so replicas behind
   * a load balancer must share the keys.
   */
  sessionKeys?: readonly Uint8Array[];
  /** How long a forwarded session's token is valid, in milliseconds. Default 24 h. */
  sessionTtlMs?: number;
  /** The parse step's limits (as dispatch's `body` option): `{ limit, maxDepth }`. */
  body?: BodyOptions;
  /** Where failures are logged. Default: stderr. */
  logger?: Logger;
}

/** {@link ForwardOptions} checked, with their defaults. */
export interface ResolvedForwardOptions {
  readonly pageSize: number;
  readonly timeoutMs: number;
  readonly maxAnswerBytes: number;
  readonly maxListPages: number;
  readonly maxListItems: number;
  readonly maxStreams: number;
  readonly maxStreamsPerPrincipal: number;
  readonly sessionKeys: readonly Uint8Array[];
  readonly sessionTtlMs: number;
  readonly body: ReturnType<typeof resolveBodyOptions>;
  readonly logger: Logger;
}

/** The names of {@link ForwardOptions}, so a factory can refuse an unknown name with the closest one. */
export const FORWARD_OPTION_NAMES: readonly string[] = Object.freeze([
  'pageSize',
  'timeoutMs',
  'maxAnswerBytes',
  'maxListPages',
  'maxListItems',
  'maxStreams',
  'maxStreamsPerPrincipal',
  'sessionKeys',
  'sessionTtlMs',
  'body',
  'logger',
]);

const BODY_OPTION_NAMES: readonly string[] = ['limit', 'maxDepth'];

/**
 * Check the forwarding options among `o` (the factory's whole options object: names that are not forwarding
 * options are left to the factory, which refuses unknown ones with FORWARD_OPTION_NAMES and its own). Throws
 * the options kit's TypeError naming `factory` and the option.
 */
export function resolveForwardOptions(factory: string, o: Record<string, unknown>): ResolvedForwardOptions {
  const body = optionsObject(factory, o.body as BodyOptions | undefined, 'option "body"');
  knownKeys(factory, body, BODY_OPTION_NAMES, 'body.');
  return {
    pageSize: intOption(factory, 'pageSize', o.pageSize, 0, 0),
    timeoutMs: intOption(factory, 'timeoutMs', o.timeoutMs, 60_000, 0, 2_147_483_647),
    maxAnswerBytes: intOption(factory, 'maxAnswerBytes', o.maxAnswerBytes, 4 * 1024 * 1024, 1024),
    maxListPages: intOption(factory, 'maxListPages', o.maxListPages, 100, 1),
    maxListItems: intOption(factory, 'maxListItems', o.maxListItems, 10_000, 1),
    maxStreams: intOption(factory, 'maxStreams', o.maxStreams, 1000, 0, 1_000_000),
    maxStreamsPerPrincipal: intOption(
      factory,
      'maxStreamsPerPrincipal',
      o.maxStreamsPerPrincipal,
      10,
      0,
      1_000_000,
    ),
    sessionKeys: sessionKeysOption(factory, o.sessionKeys),
    sessionTtlMs: intOption(factory, 'sessionTtlMs', o.sessionTtlMs, 24 * 60 * 60 * 1000, 1),
    body: resolveBodyOptions(factory, body),
    logger: loggerOption(factory, o.logger, stderrLogger),
  };
}

/** The shortest session key, in bytes (HMAC-SHA256's block of security). */
const MIN_SESSION_KEY_BYTES = 32;

/** `sessionKeys`: a non-empty array of Buffers (Uint8Arrays) of at least 32 bytes; a random key by default. */
function sessionKeysOption(factory: string, v: unknown): readonly Uint8Array[] {
  if (v === undefined) return [randomBytes(MIN_SESSION_KEY_BYTES)];
  if (!Array.isArray(v) || v.length === 0)
    throw badOption(factory, 'sessionKeys', v, 'a non-empty array of Buffers');
  return (v as unknown[]).map((k, i) => {
    if (!(k instanceof Uint8Array) || k.length < MIN_SESSION_KEY_BYTES) {
      // Never echo key material into an error message: describe it.
      const shown = k instanceof Uint8Array ? `(a Buffer of ${k.length} bytes)` : `(a ${typeof k})`;
      throw badOption(
        factory,
        `sessionKeys[${i}]`,
        shown,
        `a Buffer of at least ${MIN_SESSION_KEY_BYTES} bytes`,
      );
    }
    return Buffer.from(k);
  });
}

/** The engine: the terminal middleware that forwards, and its shutdown. */
export interface Forwarder {
  /** The terminal middleware: answers every request (POST, GET, DELETE; 405 for any other method). */
  handle: Middleware;
  /** Aborts every exchange in flight; resolves when they have ended. */
  close(): Promise<void>;
}

/**
 * The forwarding engine over an adapter's {@link Send}. `factory` names the adapter in refusals (`by`) and log
 * lines; `options` come from {@link resolveForwardOptions}.
 * @example
 * ```ts
 * import { createForwarder, resolveForwardOptions } from './forward.js';
 *
 * const forwarder = createForwarder(
 *   'proxy',
 *   (request) => fetch('http://127.0.0.1:9000/mcp', { method: request.method, headers: request.headers, body: request.body, signal: request.signal }),
 *   resolveForwardOptions('proxy', { timeoutMs: 10_000 }),
 * );
 * app.use('/mcp', forwarder.handle);
 * ```
 */
export function createForwarder(factory: string, send: Send, options: ResolvedForwardOptions): Forwarder {
  if (typeof send !== 'function')
    throw new TypeError(`${factory}: the forwarding engine needs a send function`);
  const engine = new Engine(factory, send, options);
  return { handle: engine.handle, close: () => engine.close() };
}

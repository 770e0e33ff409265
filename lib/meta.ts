/**
 * Reserved `_meta` keys of MCP 2026-07-28 and the key-name rules.
 */

export const META = Object.freeze({
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
  progressToken: 'progressToken',
} as const);

/** The `_meta` keys whose presence marks a request as claiming the modern envelope. */
export const MODERN_SIGNAL_KEYS: readonly string[] = Object.freeze([
  META.protocolVersion,
  META.clientCapabilities,
  META.clientInfo,
]);

/** Logging levels (RFC 5424 order, least severe first). */
export const LOG_LEVELS = Object.freeze([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const);
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * True for one of the eight syslog level names MCP's `logging` uses (`debug` … `emergency`).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isLogLevel } from 'mcpware/lib';
 *
 * console.log(isLogLevel('warning'), isLogLevel('warn')); // true false
 * ```
 */
export function isLogLevel(v: unknown): v is LogLevel {
  return typeof v === 'string' && (LOG_LEVELS as readonly string[]).includes(v);
}

/** Severity rank of a level (debug = 0 … emergency = 7). */
export function logLevelRank(l: LogLevel): number {
  return LOG_LEVELS.indexOf(l);
}

/** The unprefixed keys the spec reserves (W3C Trace Context and Baggage). */
const UNPREFIXED_RESERVED = new Set(['traceparent', 'tracestate', 'baggage']);

/**
 * True when a `_meta` key is reserved for MCP itself: a prefix (dot-separated labels before `/`) whose second
 * label is `modelcontextprotocol` or `mcp` (`io.modelcontextprotocol/…`, `dev.mcp/…`), or a W3C tracing key.
 */
export function isReservedMetaKey(key: string): boolean {
  if (UNPREFIXED_RESERVED.has(key)) return true;
  const slash = key.indexOf('/');
  if (slash <= 0) return false;
  const labels = key.slice(0, slash).split('.');
  const second = labels[1];
  return second === 'modelcontextprotocol' || second === 'mcp';
}

/**
 * A copy of `_meta` without MCP-reserved keys (tracing keys and `progressToken` are kept), or `undefined` when
 * nothing is left. Use it before forwarding caller `_meta` so a caller cannot forge server-set fields.
 */
export function stripReservedMeta(
  meta: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!meta) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(meta)) {
    if (isReservedMetaKey(k) && !UNPREFIXED_RESERVED.has(k)) continue;
    (out ??= {})[k] = meta[k];
  }
  return out;
}

/**
 * `parse()`: read the POST body under a size limit and parse it once into `req.locals.mcp`.
 *
 * Refuses: a non-JSON Content-Type (415), a Content-Encoding other than gzip, deflate, br or identity (415), a
 * body over the limit as sent or once decoded (413, before any parsing), invalid JSON or UTF-8 or a body not in
 * its coding (400 / -32700, no id), a batch (400 / -32600), anything that is not one JSON-RPC message, ids that are
 * not strings or safe integers, members named twice, `__proto__`, nesting past `maxDepth`, a method name past
 * 256 characters (400 / -32600).
 * Uses `req.body` when express.json (or another body parser) already ran on a JSON Content-Type. Non-POST
 * requests pass through.
 * @see docs/middleware/parse.md
 */
import type { IncomingMessage } from 'node:http';
import { log } from '../../core/log.js';
import { type BodyOptions, bodyReadElsewhere, onParsed, resolveBodyOptions } from '../../core/parse-step.js';
import { stderrLogger } from '../../core/respond.js';
import { notPost } from '../../core/post-only.js';
import { knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import type { Logger, Middleware } from '../../core/types.js';
import type { McpRequest } from '../../lib/request.js';

export interface ParseOptions extends BodyOptions {
  /** Where unexpected errors are logged. Default: stderr. */
  logger?: Logger;
}

const OPTIONS = ['limit', 'maxDepth', 'logger'] as const;

/**
 * Said once per instance, at the first POST whose body another parser read before parse() ran: that parser's
 * size limit and error pages then answer bad JSON and large bodies, and the body is read before anything
 * mounted ahead of parse() (authentication) could refuse the request.
 */
const READ_ELSEWHERE =
  'parse: the request body was already read by another body parser (an app-wide express.json() or similar) ' +
  "before parse(): that parser's size limit and error pages apply, not parse()'s, and the body is read " +
  'before authentication; keep it off the MCP route (mount the MCP route before app.use(express.json()))';

/**
 * Read and parse the JSON-RPC body once, refusing with the spec's answer what is not one request (415, 413,
 * -32700, -32600). The parsed request is then `req.locals.mcp` (read it with {@link getMcp} or {@link
 * mcpOf}). Mount it before any app-wide body parser.
 * @param options - {@link ParseOptions}
 * @see docs/middleware/parse.md
 * @example
 * ```ts
 * import { getMcp, parse } from 'mcpware/parse';
 *
 * app.use('/mcp', parse({ limit: '1mb' }), (req, _res, next) => {
 *   console.log(getMcp(req)?.method);
 *   next();
 * });
 * ```
 */
export function parse(options?: ParseOptions): Middleware {
  const o = optionsObject('parse', options);
  knownKeys('parse', o, OPTIONS);
  const body = resolveBodyOptions('parse', o);
  const logger = loggerOption('parse', o.logger, stderrLogger);
  let warned = false;
  return function mcpParse(req, res, next) {
    if (req.method !== 'POST') return notPost(req, res, next, 'parse');
    if (!warned && bodyReadElsewhere(req)) {
      warned = true;
      log(logger, 'warn', READ_ELSEWHERE);
    }
    // Synchronously from the body's `end` event (once decoded, for a body in a content coding), or at once
    // when the body is already parsed.
    onParsed(req, res, 'parse', logger, () => next(), body);
  };
}

/**
 * The parsed request, or `undefined` when the shared parse step has not run (or refused).
 * @example
 * ```ts
 * import { getMcp } from 'mcpware/parse';
 *
 * app.use('/mcp', (req, _res, next) => {
 *   const mcp = getMcp(req); // undefined before parse() has run
 *   if (mcp) console.log(mcp.method);
 *   next();
 * });
 * ```
 */
export function getMcp(req: IncomingMessage): McpRequest | undefined {
  return req.locals?.mcp;
}

/**
 * The parsed request; throws when `parse()` (or another mcpware middleware) has not parsed it.
 * @example
 * ```ts
 * import { mcpOf, parse } from 'mcpware/parse';
 *
 * app.use('/mcp', parse(), (req, _res, next) => {
 *   console.log(mcpOf(req).method);
 *   next();
 * });
 * ```
 */
export function mcpOf(req: IncomingMessage): McpRequest {
  const m = req.locals?.mcp;
  if (!m) throw new Error('mcpware: no parsed MCP request on req.locals.mcp (mount parse() first)');
  return m;
}

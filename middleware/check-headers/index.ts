/**
 * `checkHeaders()`: header consistency for modern requests. `MCP-Protocol-Version` present; `Mcp-Method` equal
 * to the body's method (values case-sensitive, names case-insensitive); `Mcp-Name` present for tools/call,
 * resources/read, prompts/get and tasks/get|update|cancel and equal to the body's name/uri/taskId after
 * Base64-sentinel decoding; and the `Mcp-Param-*` headers a tool's `x-mcp-header` annotations ask for, checked
 * against the call's arguments (the schema comes from `paramHeaders`, e.g. a ToolRegistry's `paramHeaders`).
 * Every refusal is 400 / -32020.
 * Legacy requests and notifications pass untouched (stray Mcp-* headers on them are ignored).
 * @see docs/middleware/check-headers.md
 */
import type { IncomingMessage } from 'node:http';
import { checkStandardHeaders } from '../../lib/headers.js';
import { type ParamHeader, checkParamHeaders } from '../../lib/xmcpheader.js';
import { classifyOnce, onParsed } from '../../core/parse-step.js';
import type { McpRequest } from '../../lib/request.js';
import { type ClassifyRevisionOptions, versionOptions } from '../../core/versions.js';
import { sendRefusal, stderrLogger } from '../../core/respond.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import { fnOption, knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';

export interface CheckHeadersOptions extends ClassifyRevisionOptions {
  /**
   * Looks up the `x-mcp-header` annotations of a tool by name (a ToolRegistry's `paramHeaders`, which also
   * resolves names renamed by a tool filter on this request). Unknown tools return `undefined` and are left to
   * the dispatcher. Without it, `Mcp-Param-*` headers are not checked.
   */
  paramHeaders?: (toolName: string, req: IncomingMessage) => readonly ParamHeader[] | undefined;
}

const OPTIONS = ['modernVersions', 'legacyVersions', 'logger', 'paramHeaders'] as const;

/**
 * Check a modern request's standard headers against its body: `MCP-Protocol-Version` present, `Mcp-Method`
 * and `Mcp-Name` equal to the body's, and the `Mcp-Param-*` headers a tool's `x-mcp-header` annotations ask
 * for (400 / -32020 otherwise). Mount it after `classifyRevision()`.
 * @param options - {@link CheckHeadersOptions}
 * @see docs/middleware/check-headers.md
 * @example
 * ```ts
 * import { checkHeaders } from 'mcpware/check-headers';
 * import { ToolRegistry } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry();
 * app.use('/mcp', checkHeaders({ paramHeaders: tools.paramHeaders }));
 * ```
 */
export function checkHeaders(options?: CheckHeadersOptions): Middleware {
  const o = optionsObject('checkHeaders', options);
  knownKeys('checkHeaders', o, OPTIONS);
  const lookup = fnOption<NonNullable<CheckHeadersOptions['paramHeaders']>>(
    'checkHeaders',
    'paramHeaders',
    o.paramHeaders,
  );
  const versions = versionOptions('checkHeaders', o);
  const logger = loggerOption('checkHeaders', o.logger, stderrLogger);
  /** True when the request may go on; otherwise the refusal has been written. */
  const check = (req: IncomingMessage, res: Parameters<Middleware>[1], mcp: McpRequest): boolean => {
    if (mcp.kind !== 'request') return true;
    const cls = classifyOnce(req, mcp, versions);
    if (!cls.ok) {
      sendRefusal(req, res, cls, 'checkHeaders');
      return false;
    }
    if (cls.era !== 'modern') return true;
    const std = checkStandardHeaders({ method: mcp.method!, params: mcp.params, headers: mcp.headers });
    if (std) {
      sendRefusal(req, res, std, 'checkHeaders');
      return false;
    }
    if (lookup && mcp.method === 'tools/call' && mcp.target !== undefined) {
      const params = lookup(mcp.target, req);
      if (params && params.length > 0) {
        const bad = checkParamHeaders(params, mcp.arguments, req.headers);
        if (bad) {
          sendRefusal(req, res, bad, 'checkHeaders');
          return false;
        }
      }
    }
    return true;
  };
  const late = mountOrderCheck('checkHeaders', logger);
  return function mcpCheckHeaders(req, res, next) {
    if (late(req, res)) return next();
    if (req.method !== 'POST') return notPost(req, res, next, 'checkHeaders');
    onParsed(req, res, 'checkHeaders', logger, (mcp) => {
      if (check(req, res, mcp)) next();
    });
  };
}

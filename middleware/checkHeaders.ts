/**
 * `checkHeaders()`: header consistency for modern requests. `MCP-Protocol-Version` present; `Mcp-Method` equal
 * to the body's method (values case-sensitive, names case-insensitive); `Mcp-Name` present for tools/call,
 * resources/read and prompts/get and equal to the body's name/uri after Base64-sentinel decoding; and the
 * `Mcp-Param-*` headers a tool's `x-mcp-header` annotations ask for, checked against the call's arguments
 * (the schema comes from `paramHeaders`, e.g. a ToolRegistry's `paramHeaders`). Every refusal is 400 / -32020.
 * Legacy requests and notifications pass untouched (stray Mcp-* headers on them are ignored).
 */
import { checkStandardHeaders } from '../lib/headers.js';
import { type ParamHeader, checkParamHeaders } from '../lib/xmcpheader.js';
import { classifyOnce, ensureParsed } from './context.js';
import { type ClassifyRevisionOptions, versionOptions } from './classifyRevision.js';
import { badOption, sendInternalError, sendRefusal, stderrLogger } from './respond.js';
import type { Middleware } from './types.js';

export interface CheckHeadersOptions extends ClassifyRevisionOptions {
  /**
   * Looks up the `x-mcp-header` annotations of a tool by name (a ToolRegistry's `paramHeaders`). Unknown tools
   * return `undefined` and are left to the dispatcher. Without it, `Mcp-Param-*` headers are not checked.
   */
  paramHeaders?: (toolName: string) => readonly ParamHeader[] | undefined;
}

export function checkHeaders(options: CheckHeadersOptions = {}): Middleware {
  if (options === null || typeof options !== 'object')
    throw new TypeError('checkHeaders: options must be an object');
  if (options.paramHeaders !== undefined && typeof options.paramHeaders !== 'function') {
    throw badOption(
      'checkHeaders',
      'paramHeaders',
      options.paramHeaders,
      'a function (toolName) => ParamHeader[] | undefined',
    );
  }
  const versions = versionOptions('checkHeaders', options);
  const lookup = options.paramHeaders;
  const logger = options.logger ?? stderrLogger;
  return function mcpCheckHeaders(req, res, next) {
    if (req.method !== 'POST') return next();
    ensureParsed(req, res, 'checkHeaders').then(
      (mcp) => {
        if (!mcp) return;
        if (mcp.kind !== 'request') return next();
        const cls = classifyOnce(req, mcp, versions);
        if (!cls.ok) return sendRefusal(req, res, cls, 'checkHeaders');
        if (cls.era !== 'modern') return next();
        const std = checkStandardHeaders({ method: mcp.method!, params: mcp.params, headers: mcp.headers });
        if (std) return sendRefusal(req, res, std, 'checkHeaders');
        if (lookup && mcp.method === 'tools/call' && mcp.target !== undefined) {
          const params = lookup(mcp.target);
          if (params && params.length > 0) {
            const bad = checkParamHeaders(params, mcp.arguments, req.headers);
            if (bad) return sendRefusal(req, res, bad, 'checkHeaders');
          }
        }
        next();
      },
      (err: unknown) => sendInternalError(req, res, err, 'checkHeaders', logger),
    );
  };
}

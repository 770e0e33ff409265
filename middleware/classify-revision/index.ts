/**
 * `classifyRevision()`: decide each request's era (modern 2026-07-28 envelope, or legacy handshake) and refuse
 * an unsound modern envelope. The rules and their precedence are in lib/classify.ts. Every refusal is 400 with
 * the code the spec gives (-32602 missing/malformed envelope, -32020 header/body version disagreement,
 * -32022 unsupported revision with `{supported, requested}`).
 * @see docs/middleware/classify-revision.md
 */
import { type ClassifyRevisionOptions, versionOptions } from '../../core/versions.js';
import { classifyOnce, onParsed } from '../../core/parse-step.js';
import type { McpRequest } from '../../lib/request.js';
import { sendRefusal, stderrLogger } from '../../core/respond.js';
import { mountOrderCheck } from '../../core/mount-order.js';
import { notPost } from '../../core/post-only.js';
import { knownKeys, loggerOption, optionsObject } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';

export type { ClassifyRevisionOptions } from '../../core/versions.js';

/**
 * Classify each parsed request as legacy (2025-11-25) or modern (2026-07-28 and later) from its `_meta` and
 * `MCP-Protocol-Version` header, into `req.locals.era`, and refuse a request whose version is inconsistent
 * or not served (400). Mount it after `parse()`.
 * @param options - {@link ClassifyRevisionOptions}
 * @see docs/middleware/classify-revision.md
 * @example
 * ```ts
 * import { classifyRevision } from 'mcpware/classify-revision';
 * import { parse } from 'mcpware/parse';
 *
 * app.use('/mcp', parse(), classifyRevision({ modernVersions: ['2026-07-28'] }));
 * ```
 */
export function classifyRevision(options?: ClassifyRevisionOptions): Middleware {
  const o = optionsObject('classifyRevision', options);
  knownKeys('classifyRevision', o, ['modernVersions', 'legacyVersions', 'logger']);
  const versions = versionOptions('classifyRevision', o);
  const logger = loggerOption('classifyRevision', o.logger, stderrLogger);
  /** True when the request may go on; otherwise the refusal has been written. */
  const check = (
    req: Parameters<Middleware>[0],
    res: Parameters<Middleware>[1],
    mcp: McpRequest,
  ): boolean => {
    const result = classifyOnce(req, mcp, versions);
    if (result.ok) return true;
    sendRefusal(req, res, result, 'classifyRevision');
    return false;
  };
  const late = mountOrderCheck('classifyRevision', logger);
  return function mcpClassifyRevision(req, res, next) {
    if (late(req, res)) return next();
    if (req.method !== 'POST') return notPost(req, res, next, 'classifyRevision');
    onParsed(req, res, 'classifyRevision', logger, (mcp) => {
      if (check(req, res, mcp)) next();
    });
  };
}

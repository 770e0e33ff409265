/**
 * `classifyRevision()`: decide each request's era (modern 2026-07-28 envelope, or legacy handshake) and refuse
 * an unsound modern envelope. The rules and their precedence are in lib/classify.ts. Every refusal is 400 with
 * the code the spec gives (-32602 missing/malformed envelope, -32020 header/body version disagreement,
 * -32022 unsupported revision with `{supported, requested}`).
 * @see docs/middleware/classify-revision.md
 */
import type { ClassifyOptions } from '../../lib/classify.js';
import { MODERN_VERSIONS, LEGACY_VERSIONS } from '../../lib/revisions.js';
import { afterParse, classifyOnce } from '../internal/parse-step.js';
import type { McpRequest } from '../../lib/request.js';
import { sendRefusal, stderrLogger } from '../internal/respond.js';
import { badOption, knownKeys, loggerOption, optionsObject } from '../internal/options.js';
import type { Logger, Middleware } from '../types.js';

export interface ClassifyRevisionOptions {
  /** Modern revisions served. Default `['2026-07-28']`. */
  modernVersions?: readonly string[];
  /** Legacy revisions served. Default `['2025-11-25','2025-06-18','2025-03-26','2024-11-05']`. */
  legacyVersions?: readonly string[];
  /** Where unexpected errors are logged. Default: stderr. */
  logger?: Logger;
}

/** The revision lists of `o`, validated, with their defaults. */
export function versionOptions(factory: string, o: ClassifyRevisionOptions): ClassifyOptions {
  const check = (name: string, v: unknown, dflt: readonly string[]): readonly string[] => {
    if (v === undefined) return dflt;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(x))) {
      throw badOption(factory, name, v, 'an array of revision strings (YYYY-MM-DD)');
    }
    return v as readonly string[];
  };
  return {
    modernVersions: check('modernVersions', o.modernVersions, MODERN_VERSIONS),
    legacyVersions: check('legacyVersions', o.legacyVersions, LEGACY_VERSIONS),
  };
}

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
  return function mcpClassifyRevision(req, res, next) {
    if (req.method !== 'POST') return next();
    afterParse(req, res, next, 'classifyRevision', logger, (mcp) => check(req, res, mcp));
  };
}

/** The revision lists that `classifyRevision()`, `checkHeaders()` and `dispatch()` accept, validated once. */
import type { ClassifyOptions } from '../lib/classify.js';
import { LEGACY_VERSIONS, MODERN_VERSIONS } from '../lib/revisions.js';
import { badOption } from './options.js';
import type { Logger } from './types.js';

export interface ClassifyRevisionOptions {
  /** Modern revisions served. Default `['2026-07-28']`. */
  modernVersions?: readonly string[];
  /** Legacy revisions served. Default `['2025-11-25','2025-06-18','2025-03-26','2024-11-05']`. */
  legacyVersions?: readonly string[];
  /** Where unexpected errors are logged. Default: stderr. */
  logger?: Logger;
}

/** The revision lists of `o`, validated, with their defaults; `prefix` names a nested group (`'versions.'`). */
export function versionOptions(factory: string, o: ClassifyRevisionOptions, prefix = ''): ClassifyOptions {
  const check = (name: string, v: unknown, dflt: readonly string[]): readonly string[] => {
    if (v === undefined) return dflt;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(x))) {
      throw badOption(factory, prefix + name, v, 'an array of revision strings (YYYY-MM-DD)');
    }
    return v as readonly string[];
  };
  return {
    modernVersions: check('modernVersions', o.modernVersions, MODERN_VERSIONS),
    legacyVersions: check('legacyVersions', o.legacyVersions, LEGACY_VERSIONS),
  };
}

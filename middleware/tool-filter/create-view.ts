/**
 * The view `toolFilter()` installs: its options (an allow-list, per-tool overrides and per-group visibility),
 * validated once, and the {@link ToolView} they describe. The views machinery `dispatch()`, `ToolRegistry` and
 * the forwarding engine apply is core/tool-views.ts; the per-principal part is in ./groups.ts.
 */
import {
  OPTION_ERRORS,
  badOption,
  closest,
  knownKeys,
  loggerOption,
  optionError,
  optionsObject,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { ToolView } from '../../core/tool-views.js';
import type { Logger } from '../../core/types.js';
import { isJsonObject } from '../../lib/json.js';

export interface ToolOverride {
  /** The user-facing name. Empty or absent keeps the original. */
  name?: string;
  /** The user-facing description. Empty or absent keeps the original. */
  description?: string;
}

export interface ToolFilterOptions {
  /** User-facing (post-override) names of the tools to keep. Empty or absent: keep every tool. */
  allow?: readonly string[];
  /** Actual tool name → override. */
  override?: Readonly<Record<string, ToolOverride>>;
  /**
   * Actual tool name → the groups that see it: a tool named here is listed and callable only for a principal
   * in one of those groups (`req.locals.principal.groups`); for everyone else it is an unknown tool.
   */
  groups?: Readonly<Record<string, readonly string[]>>;
  /** Where the one start-up warning goes (no final handler applied the views). Default: stderr. */
  logger?: Logger;
}

export const F = 'toolFilter';
const OPTIONS: readonly (keyof ToolFilterOptions)[] = ['allow', 'override', 'groups', 'logger'];
const OVERRIDE_FIELDS: readonly (keyof ToolOverride)[] = ['name', 'description'];

/** The allow-list: user-facing tool names, each a non-empty string. */
function allowListOf(v: unknown): readonly string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw badOption(F, 'allow', v, 'an array of tool names');
  v.forEach((n: unknown, i) => {
    if (typeof n !== 'string' || n === '') throw badOption(F, `allow[${i}]`, n, 'a non-empty tool name');
  });
  return v as string[];
}

/** One override, `{ name?, description? }`, with at least one of them set. */
function overrideOf(actual: string, o: unknown): ToolOverride {
  const where = `override.${actual}`;
  if (!isJsonObject(o)) {
    throw badOption(F, where, o, 'an object { name?, description? }');
  }
  for (const key of Object.keys(o)) {
    if (OVERRIDE_FIELDS.includes(key as keyof ToolOverride)) continue;
    const near = closest(key, OVERRIDE_FIELDS);
    const hint = near === undefined ? '' : `; did you mean "${near}"?`;
    throw optionError(
      OPTION_ERRORS.unknown,
      F,
      `${F}: option "${where}" has unknown key "${key}"${hint} (known: name, description)`,
    );
  }
  const { name, description } = o as Record<string, unknown>;
  if (name !== undefined && typeof name !== 'string') throw badOption(F, `${where}.name`, name, 'a string');
  if (description !== undefined && typeof description !== 'string') {
    throw badOption(F, `${where}.description`, description, 'a string');
  }
  if (!name && !description) {
    throw optionError(
      OPTION_ERRORS.invalid,
      F,
      `${F}: option "${where}" must set a name or a description (both are empty)`,
    );
  }
  return { name, description } as ToolOverride;
}

/** The groups of one `groups` entry: a non-empty array of non-empty group names. */
function groupListOf(actual: string, v: unknown): ReadonlySet<string> {
  const where = `groups.${actual}`;
  if (!Array.isArray(v) || v.length === 0) throw badOption(F, where, v, 'a non-empty array of group names');
  v.forEach((g: unknown, i) => {
    if (typeof g !== 'string' || g === '') throw badOption(F, `${where}[${i}]`, g, 'a non-empty group name');
  });
  return new Set(v as string[]);
}

/** One `groups` entry: the actual tool name and the groups that see it. */
export interface GroupRule {
  readonly actual: string;
  readonly groups: ReadonlySet<string>;
}

/** The `groups` option: actual tool name → the groups that see it. */
function groupRulesOf(v: unknown): readonly GroupRule[] {
  if (v === undefined) return [];
  if (!isJsonObject(v)) throw badOption(F, 'groups', v, 'an object mapping tool names to group names');
  return Object.entries(v as Record<string, unknown>).map(([actual, list]) => {
    if (actual === '') {
      throw optionError(OPTION_ERRORS.invalid, F, `${F}: option "groups" has an empty tool name`);
    }
    return { actual, groups: groupListOf(actual, list) };
  });
}

/** The allow-list and overrides as one view; `undefined` when neither is set. */
function staticView(o: Record<string, unknown>): ToolView | undefined {
  const allowList = allowListOf(o.allow);
  const rawOverride: unknown = o.override ?? {};
  if (!isJsonObject(rawOverride)) {
    throw badOption(F, 'override', rawOverride, 'an object mapping tool names to { name?, description? }');
  }
  // Maps, not objects: a tool named "constructor" or "__proto__" must not meet Object.prototype.
  const renameTo = new Map<string, string>();
  const describeAs = new Map<string, string>();
  const renamedFrom = new Map<string, string>();
  for (const [actual, raw] of Object.entries(rawOverride as Record<string, unknown>)) {
    if (actual === '') {
      throw optionError(OPTION_ERRORS.invalid, F, `${F}: option "override" has an empty tool name`);
    }
    const { name, description } = overrideOf(actual, raw);
    if (name && name !== actual) {
      const prior = renamedFrom.get(name);
      if (prior !== undefined) {
        throw optionError(
          OPTION_ERRORS.invalid,
          F,
          `${F}: option "override" renames both "${prior}" and "${actual}" to "${name}"`,
        );
      }
      renameTo.set(actual, name);
      renamedFrom.set(name, actual);
    }
    if (description) describeAs.set(actual, description);
  }
  if (allowList.length === 0 && renameTo.size === 0 && describeAs.size === 0) return undefined;
  const allow = allowList.length > 0 ? new Set(allowList) : undefined;
  const allowed = (name: string): boolean => allow === undefined || allow.has(name);

  return {
    expose(actual) {
      let name = renameTo.get(actual);
      if (name === undefined) {
        // Another tool was renamed onto this name: that one wins, this one is hidden (list and call agree).
        if (renamedFrom.has(actual)) return undefined;
        name = actual;
      }
      if (!allowed(name)) return undefined;
      const description = describeAs.get(actual);
      return description === undefined ? { name } : { name, description };
    },
    resolve(name) {
      if (!allowed(name)) return undefined;
      const actual = renamedFrom.get(name);
      if (actual !== undefined) return actual;
      // The original name of a renamed tool is no longer shown, so it is not callable either.
      if (renameTo.has(name)) return undefined;
      return name;
    },
  };
}

/** `toolFilter()`'s options, validated: the view of the allow-list and overrides, and the group rules. */
export interface ToolFilterConfig {
  /** The allow-list and overrides; `undefined` when neither is set. */
  readonly base: ToolView | undefined;
  readonly groups: readonly GroupRule[];
  readonly logger: Logger;
}

/** Validate `toolFilter()`'s options (a TypeError naming the option, and the closest name for an unknown one). */
export function resolveToolFilter(options: ToolFilterOptions): ToolFilterConfig {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
  const base = staticView(o as Record<string, unknown>);
  const groups = groupRulesOf(o.groups);
  const logger = loggerOption(F, o.logger, stderrLogger);
  if (base === undefined && groups.length === 0) {
    throw optionError(
      OPTION_ERRORS.missing,
      F,
      'toolFilter: set "allow", "override" or both, or "groups" (nothing to filter, override or restrict)',
    );
  }
  return { base, groups, logger };
}

/**
 * The view of the allow-list and overrides, for a caller in no group (exported for callers that are not HTTP
 * middleware; `groups` hides its tools from such a caller).
 */
export function createToolView(options: ToolFilterOptions): ToolView {
  const { base, groups } = resolveToolFilter(options);
  return restrictView(base, new Set(groups.map((r) => r.actual)));
}

/** Every tool, as it is. */
const IDENTITY: ToolView = { expose: (name) => ({ name }), resolve: (name) => name };

/** `base` (or every tool) with the actual tools in `hidden` taken out, from the list and from the calls. */
export function restrictView(base: ToolView | undefined, hidden: ReadonlySet<string>): ToolView {
  const inner = base ?? IDENTITY;
  if (hidden.size === 0) return inner;
  return {
    expose: (actual) => (hidden.has(actual) ? undefined : inner.expose(actual)),
    resolve(name) {
      const actual = inner.resolve(name);
      return actual === undefined || hidden.has(actual) ? undefined : actual;
    },
  };
}

/**
 * The view `toolFilter()` installs: its options (an allow-list and per-tool overrides), validated once, and the
 * {@link ToolView} they describe. The views machinery `dispatch()` and `ToolRegistry` apply is core/tool-views.ts.
 */
import {
  OPTION_ERRORS,
  badOption,
  closest,
  knownKeys,
  optionError,
  optionsObject,
} from '../../core/options.js';
import type { ToolView } from '../../core/tool-views.js';
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
}

const F = 'toolFilter';
const OPTIONS: readonly (keyof ToolFilterOptions)[] = ['allow', 'override'];
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

/** Build the view `toolFilter()` installs (exported for callers that are not HTTP middleware). */
export function createToolView(options: ToolFilterOptions): ToolView {
  const o = optionsObject(F, options);
  knownKeys(F, o, OPTIONS);
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
  if (allowList.length === 0 && renameTo.size === 0 && describeAs.size === 0) {
    throw optionError(
      OPTION_ERRORS.missing,
      F,
      'toolFilter: set "allow", "override" or both (the tool list to filter or override is empty)',
    );
  }
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

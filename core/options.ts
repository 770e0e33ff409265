/**
 * The one options kit every factory uses. A factory validates all of its options when it is called: unknown
 * names are refused with a TypeError naming the factory, the option and the closest known name, so a typo can
 * never switch a check off; a value of the wrong kind is refused with what was expected and what was given.
 * Every such TypeError carries a stable `code` (OPTION_ERRORS) and its message ends with the docs page and
 * anchor of the factory's option table, so a program can tell the mistakes apart and a reader finds the table.
 * Nothing here runs per request.
 */
import type { Logger } from './types.js';
import { isJsonObject } from '../lib/json.js';

/** The `code` of every TypeError the kit throws, one per kind of mistake (listed in docs/troubleshooting.md). */
export const OPTION_ERRORS = {
  /** A name the factory does not know (the closest known name, or the list, in the message). */
  unknown: 'ERR_MCPWARE_UNKNOWN_OPTION',
  /** A name the factory takes elsewhere now (the new place in the message). */
  moved: 'ERR_MCPWARE_MOVED_OPTION',
  /** A required option left out. */
  missing: 'ERR_MCPWARE_MISSING_OPTION',
  /** A value of the wrong kind (what was expected and what was given in the message). */
  invalid: 'ERR_MCPWARE_INVALID_OPTION',
} as const;
export type OptionErrorCode = (typeof OPTION_ERRORS)[keyof typeof OPTION_ERRORS];

/** A TypeError the options kit throws: `code` set, the message ending with where the options are documented. */
export type OptionError = TypeError & { readonly code: OptionErrorCode };

/**
 * Each factory's option table, by the factory name its errors start with. A name such as `McpTestClient.callTool`
 * that is not listed falls back to the part before the first `.`. Every entry resolves to a heading of a page
 * (test/contracts/options.test.ts checks it).
 */
const OPTION_DOCS: ReadonlyMap<string, string> = new Map([
  ['apiKeyAuth', 'docs/middleware/api-key-auth.md#options'],
  ['audit', 'docs/middleware/audit.md#options'],
  ['authenticate', 'docs/middleware/auth.md#options'],
  ['checkHeaders', 'docs/middleware/check-headers.md#options'],
  ['classifyRevision', 'docs/middleware/classify-revision.md#options'],
  ['compose', 'docs/middleware/compose.md#options'],
  ['dispatch', 'docs/middleware/dispatch.md#options'],
  ['dispatch.close', 'docs/middleware/dispatch.md#shutdown'],
  ['mcpEndpoint', 'docs/middleware/endpoint.md#options'],
  ['guardOrigin', 'docs/middleware/guard-origin.md#options'],
  ['limits', 'docs/middleware/limits.md#options'],
  ['methodGuard', 'docs/middleware/method-guard.md#options'],
  ['metrics', 'docs/middleware/metrics.md#options'],
  ['metricsHandler', 'docs/middleware/metrics.md#options'],
  ['oidcAuth', 'docs/middleware/oidc-auth.md#options'],
  ['otel', 'docs/middleware/otel.md#options'],
  ['parse', 'docs/middleware/parse.md#options'],
  ['protectedResourceMetadata', 'docs/middleware/protected-resource-metadata.md#options'],
  ['proxy', 'docs/middleware/proxy.md#options'],
  ['redact', 'docs/middleware/redact.md#options'],
  ['sdk', 'docs/middleware/sdk.md#options'],
  ['rejectBatch', 'docs/middleware/reject-batch.md#options'],
  ['toolFilter', 'docs/middleware/tool-filter.md#options'],
  ['loadCatalogue', 'docs/handlers/catalogue.md#options'],
  ['redisChangeFeed', 'docs/handlers/changes.md#options'],
  ['completion', 'docs/handlers/completion.md#options'],
  ['prompts', 'docs/handlers/prompts.md#options'],
  ['resources', 'docs/handlers/resources.md#options'],
  ['memoryResources', 'docs/handlers/resources.md#options'],
  ['ToolRegistry', 'docs/handlers/tools.md#options'],
  ['ToolRegistry.register', 'docs/handlers/tools.md#usage'],
  ['McpTestClient', 'docs/testing.md#options'],
  ['TestIssuer', 'docs/testing.md#testissuer'],
  ['memoryTaskStore', 'docs/guides/tasks.md#stores'],
  ['redisTaskStore', 'docs/guides/tasks.md#stores'],
]);

/** Where `factory`'s options are documented (`docs/….md#anchor`), or `undefined` for a name not listed. */
export function optionDocs(factory: string): string | undefined {
  return OPTION_DOCS.get(factory) ?? OPTION_DOCS.get(/^[A-Za-z]+/.exec(factory)?.[0] ?? '');
}

/** The names OPTION_DOCS lists (for the test that every anchor resolves). */
export function documentedFactories(): readonly string[] {
  return [...OPTION_DOCS.keys()];
}

/**
 * The kit's TypeError: `message` (which starts with the factory's name), then the docs page and anchor, and
 * `code`. Factories throw it for mistakes the helpers below do not cover, so every option error looks alike.
 */
export function optionError(code: OptionErrorCode, factory: string, message: string): OptionError {
  const docs = optionDocs(factory);
  const error = new TypeError(docs === undefined ? message : `${message} (see ${docs})`) as TypeError & {
    code: OptionErrorCode;
  };
  error.code = code;
  return error;
}

/** A TypeError naming the factory, the option, what it expected and the value given. */
export function badOption(factory: string, option: string, value: unknown, expected: string): OptionError {
  return optionError(
    OPTION_ERRORS.invalid,
    factory,
    `${factory}: option "${option}" must be ${expected}, got ${shown(value)}`,
  );
}

/** A required option left out: `what` says what to give. */
export function missingOption(factory: string, option: string, what: string): OptionError {
  return optionError(OPTION_ERRORS.missing, factory, `${factory}: option "${option}" is required: ${what}`);
}

function shown(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  try {
    return String(JSON.stringify(value));
  } catch {
    return String(value);
  }
}

/**
 * The options argument itself: `undefined` becomes `{}`; anything but a plain object is refused (this also
 * catches `app.use(factory)`, where Express would pass the request as the options).
 */
export function optionsObject<T extends object>(factory: string, value: T | undefined, name = 'options'): T {
  if (value === undefined) return {} as T;
  if (!isJsonObject(value)) {
    throw optionError(
      OPTION_ERRORS.invalid,
      factory,
      `${factory}: ${name} must be an object, got ${shown(value)}`,
    );
  }
  return value;
}

/**
 * Refuses any own key of `options` that is not in `known`, naming the closest known name, or listing the known
 * names when none is close. `prefix` names a nested object (`'store.'`) in the message:
 * `limits: unknown option store."timeout"; did you mean "timeoutMs"?`.
 */
export function knownKeys(factory: string, options: object, known: readonly string[], prefix = ''): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = closest(key, known);
    const hint = near === undefined ? `; known options: ${known.join(', ')}` : `; did you mean "${near}"?`;
    throw optionError(OPTION_ERRORS.unknown, factory, `${factory}: unknown option ${prefix}"${key}"${hint}`);
  }
}

/**
 * Refuses any own key of `options` that `moved` lists, naming where that setting is given now (`moved` maps the
 * old name to the new place, e.g. `maxListenStreams` → `streams.maxListenStreams`). Call it before knownKeys.
 */
export function movedKeys(
  factory: string,
  options: object,
  moved: ReadonlyMap<string, string>,
  prefix = '',
): void {
  for (const key of Object.keys(options)) {
    const place = moved.get(key);
    if (place === undefined) continue;
    throw optionError(
      OPTION_ERRORS.moved,
      factory,
      `${factory}: option ${prefix}"${key}" belongs at ${place}`,
    );
  }
}

/** The known name nearest to `name` by edit distance, when it is near enough to be a likely typo. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = k.toLowerCase() === lower ? 0 : editDistance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.abs(a.length - b.length) + 64;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** An integer option in [min, max]; `fallback` when undefined. */
export function intOption(
  factory: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw badOption(factory, name, value, `an integer ${range}`);
  }
  return value;
}

/** A boolean option; `fallback` when undefined. */
export function boolOption(factory: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw badOption(factory, name, value, 'true or false');
  return value;
}

/** A string option; `fallback` when undefined. Empty strings are refused unless `allowEmpty`. */
export function stringOption<D extends string | undefined>(
  factory: string,
  name: string,
  value: unknown,
  fallback: D,
  allowEmpty = false,
): string | D {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || (!allowEmpty && value === '')) {
    throw badOption(factory, name, value, allowEmpty ? 'a string' : 'a non-empty string');
  }
  return value;
}

/** One of a fixed set of values; `fallback` when undefined. */
export function oneOf<T extends string>(
  factory: string,
  name: string,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T)) {
    throw badOption(factory, name, value, `one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
  }
  return value as T;
}

/** An optional function option. */
export function fnOption<F extends (...args: never[]) => unknown>(
  factory: string,
  name: string,
  value: unknown,
): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw badOption(factory, name, value, 'a function');
  return value as F;
}

/** A logger option: an object with an `error` method (and optional `warn`, `info`, `debug`); `fallback` when undefined. */
export function loggerOption(factory: string, value: unknown, fallback: Logger, name = 'logger'): Logger {
  if (value === undefined) return fallback;
  const l = value as Record<string, unknown> | null;
  const ok =
    l !== null &&
    typeof l === 'object' &&
    typeof l.error === 'function' &&
    ['warn', 'info', 'debug'].every((m) => l[m] === undefined || typeof l[m] === 'function');
  if (!ok) throw badOption(factory, name, value, 'a logger with an error() method');
  return value as Logger;
}

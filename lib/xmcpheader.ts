/**
 * SEP-2243 `x-mcp-header`: a tool's inputSchema may ask for a property to be mirrored into an
 * `Mcp-Param-{Name}` header. This module validates the annotations (at registration) and checks a call's
 * headers against its arguments (per request).
 */
import { type Refusal, refusal } from './errors.js';
import { decodeHeaderValue } from './sentinel.js';
import { isJsonObject } from './json.js';

export const X_MCP_HEADER = 'x-mcp-header';
export const PARAM_HEADER_PREFIX = 'Mcp-Param-';
export const MAX_SCHEMA_DEPTH = 64;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export type ParamType = 'string' | 'integer' | 'boolean';

/** One annotated property: its path through `properties`, the header suffix and the declared type. */
export interface ParamHeader {
  path: readonly string[];
  /** The annotation value, e.g. `Region` for `Mcp-Param-Region`. */
  name: string;
  /** Lower-cased full header name as Node exposes it: `mcp-param-region`. */
  headerKey: string;
  type: ParamType;
}

export type ParamHeadersResult = { ok: true; params: readonly ParamHeader[] } | { ok: false; error: string };

/** RFC 9110 tchar. */
function isTchar(c: number): boolean {
  return (
    (c >= 0x30 && c <= 0x39) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c))
  );
}

/**
 * True for an RFC 9110 token (`tchar`s only, non-empty): what an HTTP header name may be.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isToken } from 'mcpware/lib';
 *
 * console.log(isToken('Region'), isToken('my region')); // true false
 * ```
 */
export function isToken(v: string): boolean {
  if (v.length === 0) return false;
  for (let i = 0; i < v.length; i++) if (!isTchar(v.charCodeAt(i))) return false;
  return true;
}

/**
 * Validate every `x-mcp-header` annotation of an inputSchema and list them in path order.
 * Errors: annotation not a non-empty RFC 9110 token; duplicated ignoring case; on a type other than `string`,
 * `integer` or `boolean` (a declared single type is required); on the root; anywhere not reachable through a
 * static chain of `properties` (under `items`, `oneOf`/`anyOf`/`allOf`/`not`, `if`/`then`/`else`, `$ref`'d
 * definitions, …); a schema nested deeper than {@link MAX_SCHEMA_DEPTH}.
 */
export function paramHeaders(schema: unknown): ParamHeadersResult {
  if (!isJsonObject(schema)) return { ok: true, params: [] };
  const found: ParamHeader[] = [];
  const seen = new Map<string, string>();
  // Iterative walk over every object node; `path` is set only while the chain is pure `properties`.
  const stack: Array<{ node: Record<string, unknown>; depth: number; path: string[] | null; where: string }> =
    [{ node: schema, depth: 0, path: [], where: '(root)' }];
  while (stack.length > 0) {
    const { node, depth, path, where } = stack.pop()!;
    if (depth > MAX_SCHEMA_DEPTH) {
      return { ok: false, error: `inputSchema exceeds the maximum inspection depth (${MAX_SCHEMA_DEPTH})` };
    }
    if (Object.hasOwn(node, X_MCP_HEADER)) {
      const v = node[X_MCP_HEADER];
      if (depth === 0) return { ok: false, error: 'x-mcp-header is not allowed on the schema root' };
      if (path === null) {
        return {
          ok: false,
          error: `${where}: x-mcp-header is only allowed on properties reached through "properties"`,
        };
      }
      if (typeof v !== 'string') return { ok: false, error: `${where}: x-mcp-header must be a string` };
      if (v.length === 0) return { ok: false, error: `${where}: x-mcp-header must not be empty` };
      if (!isToken(v))
        return { ok: false, error: `${where}: x-mcp-header "${v}" is not a valid HTTP field-name token` };
      const lower = v.toLowerCase();
      const prior = seen.get(lower);
      if (prior !== undefined) {
        return {
          ok: false,
          error: `${where}: x-mcp-header "${v}" collides case-insensitively with ${prior}`,
        };
      }
      seen.set(lower, where);
      const t = node.type;
      if (typeof t !== 'string') {
        return {
          ok: false,
          error: `${where}: x-mcp-header requires a declared type (string, integer or boolean)`,
        };
      }
      if (t !== 'string' && t !== 'integer' && t !== 'boolean') {
        return { ok: false, error: `${where}: x-mcp-header is not permitted on type "${t}"` };
      }
      found.push({ path, name: v, headerKey: (PARAM_HEADER_PREFIX + v).toLowerCase(), type: t });
    }
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (key === 'properties' && isJsonObject(child)) {
        for (const prop of Object.keys(child)) {
          const sub = child[prop];
          if (isJsonObject(sub)) {
            stack.push({
              node: sub,
              depth: depth + 1,
              path: path === null ? null : [...path, prop],
              where: `${where === '(root)' ? '' : where + '.'}${prop}`,
            });
          }
        }
      } else if (key !== 'properties') {
        // Any other subschema-bearing keyword breaks the static chain.
        const subs = Array.isArray(child) ? child : [child];
        for (const sub of subs) {
          if (isJsonObject(sub)) {
            stack.push({ node: sub, depth: depth + 1, path: null, where: `${where}/${key}` });
            // Maps of schemas ($defs, patternProperties, dependentSchemas …): walk their values too.
          }
        }
      }
    }
  }
  found.sort((a, b) =>
    a.path.join('.') < b.path.join('.') ? -1 : a.path.join('.') > b.path.join('.') ? 1 : 0,
  );
  return { ok: true, params: found };
}

/** The value at an annotated path inside the call's arguments; `undefined` when absent or the chain breaks. */
function valueAt(args: Record<string, unknown> | undefined, path: readonly string[]): unknown {
  let cur: unknown = args;
  for (const seg of path) {
    if (!isJsonObject(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

const NUMERIC = /^[+-]?\d{1,400}(?:\.\d{1,400})?(?:[eE][+-]?\d{1,4})?$/;

/** A header value may hold visible ASCII, space and tab; anything else (controls, obs-text) is invalid. */
function hasInvalidChars(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x09 || (c >= 0x20 && c <= 0x7e)) continue;
    return true;
  }
  return false;
}

function mismatch(header: string, headerValue: string, bodyValue: string, why = 'does not match'): Refusal {
  return refusal('header_mismatch', {
    message: `${header} header ${why} the argument value`,
    data: { header, headerValue, bodyValue },
  });
}

/**
 * The header text of an argument by its JSON type, as the spec's value encoding gives it (before the Base64
 * sentinel): a string as it is, a number as its JSON text (`5` → `"5"`, `1.5` → `"1.5"`), a boolean as
 * `"true"`/`"false"`. An object or an array has none: no header carries it.
 */
function canonicalForm(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  return undefined;
}

/**
 * True when the decoded header value is the argument's canonical form; a number is compared numerically
 * (`42.0` = `42`, as the spec asks for integers). The type the schema declares is not checked here: a value
 * of another type that the header mirrors faithfully is the argument check's to refuse (invalid arguments).
 */
function mirrors(value: unknown, hv: string): boolean {
  if (typeof value === 'number') {
    const trimmed = hv.trim();
    return trimmed.length <= 800 && NUMERIC.test(trimmed) && Number(trimmed) === value;
  }
  const form = canonicalForm(value);
  return form !== undefined && hv === form;
}

/** The body side of a refusal: the canonical form, or the JSON type of a value that has none. */
function shownValue(value: unknown): string {
  return canonicalForm(value) ?? (Array.isArray(value) ? '(array)' : '(object)');
}

/**
 * Check a `tools/call`'s `Mcp-Param-*` headers against its arguments.
 * `headers` are Node's lower-cased request headers. A present, non-null value needs a matching header; a null
 * or absent value needs none; a sentinel is decoded first; the decoded value is compared with the argument's
 * canonical form for its JSON type (see {@link mirrors}); an integer parameter outside ±(2^53−1) is refused; a
 * recognized header with control characters is refused.
 */
export function checkParamHeaders(
  params: readonly ParamHeader[],
  args: Record<string, unknown> | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Refusal | undefined {
  for (const p of params) {
    const headerName = PARAM_HEADER_PREFIX + p.name;
    const raw = headers[p.headerKey];
    const value = valueAt(args, p.path);
    const rawStr = Array.isArray(raw) ? raw.join(', ') : raw;
    if (rawStr !== undefined && hasInvalidChars(rawStr)) {
      return refusal('header_malformed', {
        message: `${headerName} header contains invalid characters`,
        data: { header: headerName },
      });
    }
    if (value === undefined || value === null) continue;
    if (rawStr === undefined) {
      return refusal('missing_header', {
        message: `${headerName} header is required when "${p.path.join('.')}" is present`,
        data: { header: headerName },
      });
    }
    const decoded = decodeHeaderValue(rawStr);
    if (!decoded.ok) {
      return refusal('header_malformed', {
        message: `${headerName} header value is malformed`,
        data: { header: headerName, headerValue: rawStr },
      });
    }
    const hv = decoded.value;
    if (!mirrors(value, hv)) return mismatch(headerName, hv, shownValue(value));
    if (p.type === 'integer' && typeof value === 'number' && Math.abs(value) > MAX_SAFE) {
      return mismatch(headerName, hv, shownValue(value), 'cannot carry (outside ±(2^53−1))');
    }
  }
  return undefined;
}

/**
 * Client side: the `Mcp-Param-*` headers (name → encoded value) a call must carry, each value in its canonical
 * form for its JSON type. Values that cannot be mirrored (an object or an array, an integer parameter outside
 * ±(2^53−1)) are left out; the server will refuse the call, which is the point of a test that breaks one thing
 * on purpose.
 */
export function paramHeaderValues(
  params: readonly ParamHeader[],
  args: Record<string, unknown> | undefined,
  encode: (v: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of params) {
    const v = valueAt(args, p.path);
    const form = canonicalForm(v);
    if (form === undefined) continue;
    if (p.type === 'integer' && typeof v === 'number' && Math.abs(v) > MAX_SAFE) continue;
    out[PARAM_HEADER_PREFIX + p.name] = encode(form);
  }
  return out;
}

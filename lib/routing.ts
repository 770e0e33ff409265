/**
 * Routing of JSON-RPC methods: how a method name folds into the (namespace, member) a handler object answers
 * (`tools/list` → `tools.list`), which names may be routed at all, and the method tables the dispatcher consults
 * (cacheable, input-required, removed in the modern revision, the capability each method needs). Pure: no I/O.
 *
 * @see docs/middleware/dispatch.md
 */
import { isJsonObject } from './json.js';

/**
 * Method folding for dispatch: `tools/list` → `tools.list`, `resources/templates/list` →
 * `resources.templatesList`. The first `/` becomes `.`; every later `/` is dropped and the next ASCII letter is
 * upper-cased. A method without `/` is unchanged.
 */
export function foldMethod(method: string): string {
  const first = method.indexOf('/');
  return first < 0 ? method : `${method.slice(0, first)}.${foldMember(method.slice(first + 1))}`;
}

/**
 * What follows the first `/`, folded: each later `/` is dropped and the ASCII letter after it capitalized. The
 * code units go into one buffer, turned into a string in slices: memory stays a small multiple of the input's
 * length however many segments it has (one string per segment would cost tens of bytes each).
 */
function foldMember(rest: string): string {
  if (!rest.includes('/')) return rest;
  const units = new Uint16Array(rest.length);
  let n = 0;
  let upper = false;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c === 0x2f) {
      upper = true;
      continue;
    }
    units[n++] = upper && c >= 0x61 && c <= 0x7a ? c - 32 : c;
    upper = false;
  }
  return unitsText(units, n);
}

/** Code units per String.fromCharCode call (its arguments go on the stack). */
const UNITS_PER_SLICE = 4096;

/** The string of the first `n` code units of `units`, lone surrogates kept as they are. */
function unitsText(units: Uint16Array, n: number): string {
  if (n <= UNITS_PER_SLICE) return String.fromCharCode(...units.subarray(0, n));
  const slices: string[] = [];
  for (let i = 0; i < n; i += UNITS_PER_SLICE)
    slices.push(String.fromCharCode(...units.subarray(i, Math.min(n, i + UNITS_PER_SLICE))));
  return slices.join('');
}

/** Split a folded method into its namespace and member (`tools.list` → [`tools`, `list`]; `ping` → [``, `ping`]). */
export function splitFolded(folded: string): [namespace: string, member: string] {
  const dot = folded.indexOf('.');
  return dot < 0 ? ['', folded] : [folded.slice(0, dot), folded.slice(dot + 1)];
}

/**
 * The route of a method: its namespace (before the first `/`, or `""` for a root method) and its folded member:
 * `resources/templates/list` → [`resources`, `templatesList`], `ping` → [``, `ping`].
 */
export function routeOf(method: string): readonly [namespace: string, member: string] {
  const slash = method.indexOf('/');
  if (slash < 0) return ['', method];
  return [method.slice(0, slash), foldMember(method.slice(slash + 1))];
}

const keyOf = (namespace: string, member: string): string => `${namespace}\u0000${member}`;

/**
 * A string naming a route unambiguously (`tools\0list`). The tables below are written with the methods' wire
 * names and compared by route, the key the dispatcher routes on: a spelling that reaches the same handler
 * (`resources/templatesList` for `resources/templates/list`) gets the same rules, and a root method named
 * `tools.list` is not mistaken for `tools/list`.
 */
export function routeKey(method: string): string {
  const [ns, member] = routeOf(method);
  return keyOf(ns, member);
}

/** A method's route, worked out once: its namespace, folded member and {@link routeKey}. */
export interface Route {
  readonly namespace: string;
  readonly member: string;
  readonly key: string;
}

/** The route of `method` (see {@link routeOf} and {@link routeKey}). */
export function routeFor(method: string): Route {
  const [namespace, member] = routeOf(method);
  return { namespace, member, key: keyOf(namespace, member) };
}

const routeSet = (methods: readonly string[]): ReadonlySet<string> => new Set(methods.map(routeKey));

/**
 * True when a method may be routed: no empty segment (`tools/call/`, `tools//call`, `/tools`). Folding drops
 * slashes, so `tools/call/` would otherwise reach the `tools/call` handler while every check keyed on the wire
 * name (`Mcp-Name`, `Mcp-Param-*`, tool filters in front of a gateway) looked the other way.
 */
export function isRoutableMethod(method: string): boolean {
  return method.length > 0 && !method.startsWith('/') && !method.endsWith('/') && !method.includes('//');
}

/**
 * The methods a server receives that metrics and traces name as they are (any other method is labelled as
 * other, so that a label stays bounded): requests of both revisions, the tasks extension's, and the client's
 * notifications.
 */
export const RECEIVED_METHODS: readonly string[] = Object.freeze([
  'initialize',
  'ping',
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'subscriptions/listen',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/** The methods whose complete results carry `ttlMs` and `cacheScope` (`caching.mdx`, `DiscoverResult`). */
export const CACHEABLE_METHODS: readonly string[] = Object.freeze([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
]);
const CACHEABLE = routeSet(CACHEABLE_METHODS);

/**
 * True for the list and read methods whose results may carry a cache hint (matched after folding the
 * method's case, as routing does).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isCacheable } from 'mcpware/lib';
 *
 * console.log(isCacheable('tools/list'), isCacheable('tools/call')); // true false
 * ```
 */
export function isCacheable(method: string): boolean {
  return isCacheableRoute(routeKey(method));
}

/** {@link isCacheable} of a route key. */
export function isCacheableRoute(key: string): boolean {
  return CACHEABLE.has(key);
}

/** The methods that may answer `resultType: "input_required"` (MRTR). */
export const INPUT_REQUIRED_METHODS: readonly string[] = Object.freeze([
  'tools/call',
  'prompts/get',
  'resources/read',
]);

/**
 * Methods the 2026-07-28 revision removed. A modern request for one of them is answered 404 / -32601 whatever
 * handlers are registered; in the legacy era they are served.
 */
export const REMOVED_IN_MODERN: readonly string[] = Object.freeze([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
]);
const REMOVED = routeSet(REMOVED_IN_MODERN);

/**
 * True for the methods the modern revision removed (`initialize`, `ping`, `logging/setLevel` and the
 * subscriptions): `dispatch()` answers them 404 / -32601 in the modern era.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isRemovedInModern } from 'mcpware/lib';
 *
 * console.log(isRemovedInModern('ping'), isRemovedInModern('tools/list')); // true false
 * ```
 */
export function isRemovedInModern(method: string): boolean {
  return isRemovedRoute(routeKey(method));
}

/** {@link isRemovedInModern} of a route key. */
export function isRemovedRoute(key: string): boolean {
  return REMOVED.has(key);
}

/**
 * The server capability each method needs. A method of an undeclared capability is answered -32601: a declared
 * capability is a promise to answer, an undeclared one is a promise not to. `resources.subscribe` is the
 * `subscribe` flag inside the `resources` capability. Methods not listed here are not gated.
 */
export const METHOD_CAPABILITY: Readonly<Record<string, string>> = Object.freeze({
  'tools/list': 'tools',
  'tools/call': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resources',
  'resources/read': 'resources',
  'resources/subscribe': 'resources.subscribe',
  'resources/unsubscribe': 'resources.subscribe',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
  'logging/setLevel': 'logging',
});

const CAPABILITY_BY_ROUTE: ReadonlyMap<string, string> = new Map(
  Object.entries(METHOD_CAPABILITY).map(([m, c]) => [routeKey(m), c]),
);

/** The capability gating `method`, or `undefined` when none does. */
export function requiredCapability(method: string): string | undefined {
  return capabilityOfRoute(routeKey(method));
}

/** {@link requiredCapability} of a route key. */
export function capabilityOfRoute(key: string): string | undefined {
  return CAPABILITY_BY_ROUTE.get(key);
}

/** True when `capabilities` declares `capability` (`tools`, or a flag path such as `resources.subscribe`). */
export function hasCapability(capabilities: Readonly<Record<string, unknown>>, capability: string): boolean {
  const dot = capability.indexOf('.');
  if (dot < 0) return isJsonObject(capabilities[capability]);
  const outer = capabilities[capability.slice(0, dot)];
  return isJsonObject(outer) && outer[capability.slice(dot + 1)] === true;
}

/** What a method's params name as its target: the member holding it and the kind of thing it is. */
export interface MethodTarget {
  readonly member: 'name' | 'uri' | 'taskId';
  readonly kind: 'tool' | 'prompt' | 'resource' | 'task';
  /** The target is mirrored into the `Mcp-Name` header (modern requests). */
  readonly mcpName: boolean;
}

/**
 * The methods whose params name a target (`tools/call` → `name`, `resources/read` → `uri`, `tasks/get` →
 * `taskId`, …): the one table the request view, the header check, the audit record and the dispatcher's failure
 * log read. A Map: the method is the request's, any string at all.
 */
export const METHOD_TARGETS: ReadonlyMap<string, MethodTarget> = new Map<string, MethodTarget>([
  ['tools/call', { member: 'name', kind: 'tool', mcpName: true }],
  ['prompts/get', { member: 'name', kind: 'prompt', mcpName: true }],
  ['resources/read', { member: 'uri', kind: 'resource', mcpName: true }],
  ['resources/subscribe', { member: 'uri', kind: 'resource', mcpName: false }],
  ['resources/unsubscribe', { member: 'uri', kind: 'resource', mcpName: false }],
  // The tasks extension: `Mcp-Name` carries the task id, so a balancer can route a task's requests.
  ['tasks/get', { member: 'taskId', kind: 'task', mcpName: true }],
  ['tasks/update', { member: 'taskId', kind: 'task', mcpName: true }],
  ['tasks/cancel', { member: 'taskId', kind: 'task', mcpName: true }],
]);

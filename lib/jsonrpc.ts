/**
 * JSON-RPC 2.0 message parsing and classification, hardened for a public endpoint.
 *
 * - Bodies are parsed once with the platform's JSON parser, then scanned iteratively (no recursion) to bound
 *   nesting depth and refuse members named twice.
 * - Duplicate members: an exact duplicate is refused anywhere in the body (JSON parsers disagree on which copy
 *   wins). In the envelope, in `params` and in `params._meta`, names are also compared case-insensitively
 *   (`id`/`ID`, `method`/`Method`): parsers that fold case (Go's `encoding/json`, used by many proxies and
 *   gateways) would read a different member than we do, and that differential is a smuggling vector. Inside
 *   `arguments` and other user data only exact duplicates count, since `id` and `ID` may both be legitimate.
 * - A member named `__proto__`, or a member named `constructor` holding an object, is refused anywhere: they
 *   are the raw material of prototype pollution in code that merges request data.
 */
import { type Refusal, type RequestId, isRequestId, refusal } from './errors.js';

export type JsonObject = Record<string, unknown>;

export type MessageKind = 'request' | 'notification' | 'response' | 'error';

export interface RequestMessage {
  kind: 'request';
  id: RequestId;
  method: string;
  params?: JsonObject;
  raw: JsonObject;
}
export interface NotificationMessage {
  kind: 'notification';
  method: string;
  params?: JsonObject;
  raw: JsonObject;
}
export interface ResponseMessage {
  kind: 'response';
  id: RequestId;
  result: unknown;
  raw: JsonObject;
}
export interface ErrorMessage {
  kind: 'error';
  id?: RequestId;
  error: { code: number; message: string; data?: unknown };
  raw: JsonObject;
}
export type Message = RequestMessage | NotificationMessage | ResponseMessage | ErrorMessage;

export type ParseResult = ({ ok: true } & Message) | (Refusal & { id?: RequestId });

export interface ParseOptions {
  /** Deepest nesting of objects and arrays accepted (the top-level object is depth 1). Default 64. */
  maxDepth?: number;
}

export const DEFAULT_MAX_DEPTH = 64;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** Case folding used for the envelope's duplicate check: ASCII/Unicode lower case plus the two Go folds. */
function foldKey(k: string): string {
  // Fast path (nearly every key): pure ASCII folds with plain lower-casing, and a key with no upper-case letter
  // folds to itself, so no new string is made. Only non-ASCII keys can hold the two Go folds (U+017F, U+212A).
  let upper = false;
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c > 0x7f)
      return k
        .toLowerCase()
        .replace(/\u017f/g, 's')
        .replace(/\u212a/g, 'k');
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  return upper ? k.toLowerCase() : k;
}

/**
 * One open container while scanning. Frames are pooled per nesting depth and reused across calls (scanning is
 * synchronous, so calls never interleave): a body of a few dozen containers would otherwise allocate a frame
 * and a name list for each.
 *
 * An object's member names are kept as positions in the text (`starts`/`ends`, the key's characters between
 * the quotes) and compared there, character by character: a JSON-RPC object has a handful of members, and
 * copying each name out of the text (and lower-casing the envelope's) cost more than the comparisons. A name is
 * made into a string only when it holds an escape (`names[k]`, its decoded value), when two names compared
 * case-folded differ past ASCII (or differ in length in a text holding U+0130), and past {@link SMALL_OBJECT}
 * names, where a Set of the (folded) names takes over.
 */
const SMALL_OBJECT = 16;
interface Frame {
  obj: boolean;
  /** Path role for folding: 0 = none, 1 = envelope, 2 = params, 3 = params._meta. */
  role: number;
  /** How many member names are in `starts`/`ends` (at most SMALL_OBJECT + 1; the Set holds the rest). */
  count: number;
  starts: number[];
  ends: number[];
  /** The decoded name where it differs from the text (an escaped name); empty when no name was escaped. */
  names: (string | undefined)[];
  set: Set<string> | undefined;
  /** Whether `names` holds a decoded name from this scan (emptied when the scan ends). */
  decoded: boolean;
  /** The last member name read in this object (to give roles to children): its position, -1 for none. */
  lastStart: number;
  lastEnd: number;
  lastName: string | undefined;
}
const framePool: Frame[] = [];

function newFrame(): Frame {
  return {
    obj: false,
    role: 0,
    count: 0,
    starts: [],
    ends: [],
    names: [],
    set: undefined,
    decoded: false,
    lastStart: -1,
    lastEnd: -1,
    lastName: undefined,
  };
}

/** Name `k` of the frame as a string: decoded when it was escaped, case-folded in a folding role. */
function keyAt(text: string, f: Frame, k: number): string {
  const name = f.names[k] ?? text.slice(f.starts[k], f.ends[k]);
  return f.role > 0 ? foldKey(name) : name;
}

/** Is the name between `start` and `end` (`decoded` when escaped) exactly `word` (an ASCII word)? */
function nameIs(
  text: string,
  start: number,
  end: number,
  decoded: string | undefined,
  word: string,
): boolean {
  if (decoded !== undefined) return decoded === word;
  return end - start === word.length && text.startsWith(word, start);
}

/** Is the object's last member name exactly `word`? */
function lastIs(text: string, f: Frame, word: string): boolean {
  return f.lastStart >= 0 && nameIs(text, f.lastStart, f.lastEnd, f.lastName, word);
}

/**
 * Whether the text being scanned holds U+0130 (İ): the one character whose lower case is longer than itself
 * (`i` and U+0307), so the only way two names of different lengths can fold alike. Computed on first need, per
 * scan (-1: not yet).
 */
let dottedCapitalI = -1;

/** Do names `a` and `b` of the frame collide (exactly, or case-folded in a folding role)? */
function sameName(text: string, f: Frame, a: number, b: number): boolean {
  const folded = f.role > 0;
  if (f.names[a] !== undefined || f.names[b] !== undefined) return keyAt(text, f, a) === keyAt(text, f, b);
  let i = f.starts[a]!;
  let j = f.starts[b]!;
  const len = f.ends[a]! - i;
  if (f.ends[b]! - j !== len) {
    if (!folded) return false;
    if (dottedCapitalI < 0) dottedCapitalI = text.indexOf('\u0130') >= 0 ? 1 : 0;
    return dottedCapitalI === 1 && keyAt(text, f, a) === keyAt(text, f, b);
  }
  for (const end = i + len; i < end; i++, j++) {
    let x = text.charCodeAt(i);
    let y = text.charCodeAt(j);
    if (x === y) continue;
    if (!folded) return false;
    // Past ASCII, folding is Unicode's (the Kelvin sign folds to an ASCII "k"): compare the folded names.
    if (x > 0x7f || y > 0x7f) return keyAt(text, f, a) === keyAt(text, f, b);
    // Two ASCII characters after an identical prefix: they decide.
    if (x >= 0x41 && x <= 0x5a) x += 0x20;
    if (y >= 0x41 && y <= 0x5a) y += 0x20;
    if (x !== y) return false;
  }
  return true;
}

/**
 * Add the member name found between `start` and `end` (`decoded` when it holds an escape) to the object's
 * names; false when the object already has it.
 */
function addName(text: string, f: Frame, start: number, end: number, decoded: string | undefined): boolean {
  f.lastStart = start;
  f.lastEnd = end;
  f.lastName = decoded;
  const set = f.set;
  if (set !== undefined) {
    const name = decoded ?? text.slice(start, end);
    const key = f.role > 0 ? foldKey(name) : name;
    if (set.has(key)) return false;
    set.add(key);
    return true;
  }
  const k = f.count++;
  f.starts[k] = start;
  f.ends[k] = end;
  if (decoded !== undefined) {
    f.names[k] = decoded;
    f.decoded = true;
  } else if (k < f.names.length) f.names[k] = undefined;
  for (let i = 0; i < k; i++) if (sameName(text, f, i, k)) return false;
  if (f.count > SMALL_OBJECT) {
    const all = new Set<string>();
    for (let i = 0; i < f.count; i++) all.add(keyAt(text, f, i));
    f.set = all;
  }
  return true;
}

/** True when the first character that is not JSON whitespace (after an optional BOM) is `[`. */
export function isBatchText(text: string): boolean {
  let i = 0;
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x5b;
  }
  return false;
}

/** Bytes variant of {@link isBatchText}: whitespace and a UTF-8 BOM (EF BB BF) are skipped. */
export function isBatchBytes(buf: Uint8Array): boolean {
  let i = 0;
  if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
  for (; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
    return c === 0x5b;
  }
  return false;
}

interface ScanProblem {
  reason: 'too_deep' | 'duplicate_member' | 'forbidden_member';
  message: string;
}

/**
 * Scan valid JSON text for depth and duplicate member names without recursion. Returns the first problem.
 * In the envelope (depth 1), `params` (2) and `params._meta` (3) names are compared case-folded: an exact
 * duplicate is also a folded one, so one comparison catches both.
 */
function scanText(text: string, maxDepth: number): ScanProblem | undefined {
  dottedCapitalI = -1;
  let depth = 0;
  /** The deepest level used: frames below it are emptied on the way out. */
  let high = 0;
  const n = text.length;
  // Without a backslash anywhere, every string ends at the next quote: found by indexOf, not char by char.
  const plain = text.indexOf('\\') < 0;
  let i = 0;
  let expectKey = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Read a string token.
      const start = i + 1;
      let j: number;
      let escaped = false;
      if (plain) {
        j = text.indexOf('"', start);
        if (j < 0) j = n;
      } else {
        j = start;
        while (j < n) {
          const d = text.charCodeAt(j);
          if (d === 0x5c) {
            escaped = true;
            j += 2;
            continue;
          }
          if (d === 0x22) break;
          j++;
        }
      }
      if (expectKey && depth > 0) {
        const top = framePool[depth - 1]!;
        if (top.obj) {
          const decoded = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : undefined;
          if (nameIs(text, start, j, decoded, '__proto__'))
            return fail(high, { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' });
          if (!addName(text, top, start, j, decoded)) {
            const name = decoded ?? text.slice(start, j);
            return fail(high, {
              reason: 'duplicate_member',
              message: `Member "${clip(name)}" is named twice`,
            });
          }
          expectKey = false;
        }
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = depth > 0 ? framePool[depth - 1] : undefined;
      let role = 0;
      if (c === 0x7b) {
        if (!parent) role = 1;
        else if (parent.obj && parent.role === 1 && lastIs(text, parent, 'params')) role = 2;
        else if (parent.obj && parent.role === 2 && lastIs(text, parent, '_meta')) role = 3;
        if (parent && parent.obj && lastIs(text, parent, 'constructor')) {
          return fail(high, {
            reason: 'forbidden_member',
            message: 'Member "constructor" may not hold an object',
          });
        }
      }
      if (depth >= maxDepth)
        return fail(high, { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` });
      let f = framePool[depth];
      if (f === undefined) {
        f = newFrame();
        framePool[depth] = f;
      }
      f.obj = c === 0x7b;
      f.role = role;
      f.count = 0;
      f.set = undefined;
      f.lastStart = -1;
      f.lastName = undefined;
      if (++depth > high) high = depth;
      expectKey = c === 0x7b;
      i++;
      continue;
    }
    if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
      expectKey = false;
      i++;
      continue;
    }
    if (c === 0x2c /* , */) {
      expectKey = depth > 0 && framePool[depth - 1]!.obj;
      i++;
      continue;
    }
    i++;
  }
  release(high);
  return undefined;
}

/** Empty the pooled frames below `high`, so that a body's member names are not kept alive after its scan. */
function release(high: number): void {
  for (let k = 0; k < high; k++) {
    const f = framePool[k]!;
    // Decoded names and the Set are the only strings a frame holds; positions keep nothing alive.
    if (f.decoded) {
      f.names.length = 0;
      f.decoded = false;
    }
    f.set = undefined;
    f.count = 0;
    f.lastStart = -1;
    f.lastName = undefined;
  }
}

function fail(high: number, p: ScanProblem): ScanProblem {
  release(high);
  return p;
}

function clip(s: string): string {
  return s.length > 64 ? s.slice(0, 64) + '…' : s;
}

/**
 * Parse JSON text into one classified JSON-RPC message, or a refusal. Never throws.
 * Refusals: `parse_error` (-32700, invalid JSON), `batch` (an array), `too_deep`, `duplicate_member`,
 * `forbidden_member`, `invalid_id`, `invalid_request` (-32600 for anything that is not one JSON-RPC message).
 */
export function parseMessage(text: string, opts: ParseOptions = {}): ParseResult {
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (isBatchText(text)) return refusal('batch');
    return refusal('parse_error');
  }
  if (Array.isArray(value)) return refusal('batch');
  if (value !== null && typeof value === 'object') {
    const problem = scanText(text, maxDepth);
    if (problem) {
      const r = refusal(problem.reason, { message: problem.message });
      const id = (value as JsonObject).id;
      return isRequestId(id) ? { ...r, id } : r;
    }
  }
  return classifyMessage(value);
}

/**
 * Validate an already-parsed value (for example `req.body` from express.json): depth and forbidden members are
 * checked iteratively; duplicate members cannot be seen once parsed, so use {@link parseMessage} on the raw
 * text when you can.
 */
export function parseValue(value: unknown, opts: ParseOptions = {}): ParseResult {
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  if (Array.isArray(value)) return refusal('batch');
  if (value !== null && typeof value === 'object') {
    const problem = scanValue(value, maxDepth);
    if (problem) {
      const r = refusal(problem.reason, { message: problem.message });
      const id = (value as JsonObject).id;
      return isRequestId(id) ? { ...r, id } : r;
    }
  }
  return classifyMessage(value);
}

function scanValue(root: object, maxDepth: number): ScanProblem | undefined {
  const stack: Array<[unknown, number]> = [[root, 1]];
  let guard = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (++guard > 1_000_000) return { reason: 'too_deep', message: 'Request is too large to inspect' };
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth)
      return { reason: 'too_deep', message: `Request nesting exceeds ${maxDepth} levels` };
    if (Array.isArray(v)) {
      for (const x of v) stack.push([x, depth + 1]);
      continue;
    }
    for (const k of Object.keys(v)) {
      if (k === '__proto__')
        return { reason: 'forbidden_member', message: 'Member "__proto__" is not allowed' };
      const child = (v as JsonObject)[k];
      if (k === 'constructor' && child !== null && typeof child === 'object') {
        return { reason: 'forbidden_member', message: 'Member "constructor" may not hold an object' };
      }
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/** Classify a parsed JSON value as one JSON-RPC message. */
export function classifyMessage(value: unknown): ParseResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return refusal('invalid_request', { message: 'Invalid Request: the body must be a JSON-RPC object' });
  }
  const m = value as JsonObject;
  const rawId = m.id;
  const idPresent = hasOwn(m, 'id');
  const readableId = isRequestId(rawId) ? rawId : undefined;
  const bad = (message: string): ParseResult => {
    const r = refusal('invalid_request', { message });
    return readableId !== undefined ? { ...r, id: readableId } : r;
  };
  if (m.jsonrpc !== '2.0') return bad('Invalid Request: jsonrpc must be "2.0"');
  if (idPresent && readableId === undefined) {
    return refusal('invalid_id', {
      message:
        rawId === null
          ? 'Request id must not be null: omit it for a notification'
          : 'Request id must be a string or a safe integer',
    });
  }
  if (hasOwn(m, 'method')) {
    const method = m.method;
    if (typeof method !== 'string' || method.length === 0)
      return bad('Invalid Request: method must be a non-empty string');
    if (hasOwn(m, 'result') || hasOwn(m, 'error'))
      return bad('Invalid Request: a request cannot carry result or error');
    let params: JsonObject | undefined;
    if (hasOwn(m, 'params') && m.params !== null) {
      if (typeof m.params !== 'object' || Array.isArray(m.params)) {
        return bad('Invalid Request: params must be an object');
      }
      params = m.params as JsonObject;
    }
    if (readableId !== undefined) {
      const out: { ok: true } & RequestMessage = {
        ok: true,
        kind: 'request',
        id: readableId,
        method,
        raw: m,
      };
      if (params) out.params = params;
      return out;
    }
    const out: { ok: true } & NotificationMessage = { ok: true, kind: 'notification', method, raw: m };
    if (params) out.params = params;
    return out;
  }
  const hasResult = hasOwn(m, 'result');
  const hasError = hasOwn(m, 'error');
  if (hasResult && hasError) return bad('Invalid Request: a response cannot carry both result and error');
  if (hasResult) {
    if (readableId === undefined) return bad('Invalid Request: a response needs an id');
    return { ok: true, kind: 'response', id: readableId, result: m.result, raw: m };
  }
  if (hasError) {
    const e = m.error;
    if (e === null || typeof e !== 'object' || Array.isArray(e))
      return bad('Invalid Request: error must be an object');
    const eo = e as JsonObject;
    if (typeof eo.code !== 'number' || !Number.isInteger(eo.code) || typeof eo.message !== 'string') {
      return bad('Invalid Request: error needs an integer code and a string message');
    }
    const error: ErrorMessage['error'] = { code: eo.code, message: eo.message };
    if (hasOwn(eo, 'data')) error.data = eo.data;
    const out: { ok: true } & ErrorMessage = { ok: true, kind: 'error', error, raw: m };
    if (readableId !== undefined) out.id = readableId;
    return out;
  }
  return bad('Invalid Request: not a request, notification, response or error');
}

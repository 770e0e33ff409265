/**
 * W3C Trace Context (`traceparent`, `tracestate`) and W3C Baggage (`baggage`) as an MCP request carries them in
 * `params._meta` (the three unprefixed keys the spec reserves). Each reader checks one value against its grammar
 * and bounds and answers a discriminated result with a stable `reason`; nothing throws, every loop is bounded by
 * the input's refused-above length, and no regular expression is used. The formatters write the canonical form
 * back, so that a value that passed is what gets propagated, never the caller's raw text.
 */
import { isToken } from './xmcpheader.js';

/** The length of a version-00 `traceparent`; a later version is at least this long. */
export const TRACEPARENT_LENGTH = 55;
/** The longest `traceparent` read (a later version may append fields; the rest is refused). */
export const MAX_TRACEPARENT_LENGTH = 512;
/** The most list-members a `tracestate` may hold (W3C Trace Context). */
export const MAX_TRACESTATE_MEMBERS = 32;
/** The longest `tracestate` read: the length the W3C recommends propagating at least. */
export const MAX_TRACESTATE_LENGTH = 512;
/** The most list-members a `baggage` value may hold: the W3C minimum to propagate. */
export const MAX_BAGGAGE_MEMBERS = 64;
/** The longest `baggage` value read, in bytes: the W3C minimum to propagate. */
export const MAX_BAGGAGE_BYTES = 8192;

/** A parsed `traceparent`: lowercase hex identifiers, the flags as a byte. */
export interface TraceParent {
  /** The two hex digits of the version as sent (`00`, or a later one read by the version-00 rules). */
  version: string;
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero (the caller's span: the parent of the server's). */
  spanId: string;
  /** The trace-flags byte (0–255). */
  traceFlags: number;
  /** Bit 0 of the flags. */
  sampled: boolean;
}

/** Why a `traceparent` was refused. */
export type TraceparentReason =
  'absent' | 'not_string' | 'bad_length' | 'bad_version' | 'bad_format' | 'zero_trace_id' | 'zero_span_id';

/** The answer of {@link parseTraceparent}. */
export type TraceparentResult = { ok: true; value: TraceParent } | { ok: false; reason: TraceparentReason };

/** One `tracestate` list-member, key and value as sent (without the surrounding spaces). */
export interface TracestateEntry {
  key: string;
  value: string;
}

/** Why a `tracestate` was refused. */
export type TracestateReason =
  | 'absent'
  | 'not_string'
  | 'no_traceparent'
  | 'too_long'
  | 'too_many_members'
  | 'bad_member'
  | 'bad_key'
  | 'bad_value'
  | 'duplicate_key';

/** The answer of {@link parseTracestate}: the members in order (empty members dropped). */
export type TracestateResult =
  { ok: true; entries: readonly TracestateEntry[] } | { ok: false; reason: TracestateReason };

/** A property of a baggage member: `key` or `key=value` (the value as sent, not decoded). */
export interface BaggageProperty {
  key: string;
  value?: string;
}

/** One `baggage` list-member: its key, its percent-decoded value and its properties. */
export interface BaggageEntry {
  key: string;
  /** The value, percent-decoded as UTF-8 (an invalid sequence decodes to U+FFFD). */
  value: string;
  properties: readonly BaggageProperty[];
}

/** Why a `baggage` value was refused. */
export type BaggageReason =
  | 'absent'
  | 'not_string'
  | 'too_long'
  | 'too_many_members'
  | 'bad_member'
  | 'bad_key'
  | 'bad_value'
  | 'bad_property';

/** The answer of {@link parseBaggage}: the members in order. */
export type BaggageResult =
  { ok: true; entries: readonly BaggageEntry[] } | { ok: false; reason: BaggageReason };

/** The three readings of a `_meta` object: each key answered on its own. */
export interface TraceMeta {
  traceparent: TraceparentResult;
  tracestate: TracestateResult;
  baggage: BaggageResult;
}

function isLowerHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);
}

/** True when `s[from, from + n)` is lowercase hex; `zero` tells whether every digit was `0`. */
function hexRun(s: string, from: number, n: number): { hex: boolean; zero: boolean } {
  let zero = true;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerHex(c)) return { hex: false, zero };
    if (c !== 0x30) zero = false;
  }
  return { hex: true, zero };
}

/**
 * Read a W3C `traceparent` (`version-traceid-parentid-flags`, lowercase hex). Version `00` is exactly 55
 * characters; a later version (not `ff`, which is invalid) is at least 55, its 56th character, when there is one,
 * is `-`, and its first four fields are read as version 00's (what follows is ignored). An all-zero trace-id or
 * parent-id is refused. Nothing longer than {@link MAX_TRACEPARENT_LENGTH} is read.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { parseTraceparent } from 'mcpware/lib';
 *
 * const r = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * if (r.ok) console.log(r.value.traceId, r.value.sampled); // 4bf92f3577b34da6a3ce929d0e0e4736 true
 * ```
 */
export function parseTraceparent(header: unknown): TraceparentResult {
  if (header === undefined) return { ok: false, reason: 'absent' };
  if (typeof header !== 'string') return { ok: false, reason: 'not_string' };
  const n = header.length;
  if (n < TRACEPARENT_LENGTH || n > MAX_TRACEPARENT_LENGTH) return { ok: false, reason: 'bad_length' };
  if (!hexRun(header, 0, 2).hex) return { ok: false, reason: 'bad_version' };
  const version = header.slice(0, 2);
  if (version === 'ff') return { ok: false, reason: 'bad_version' };
  if (version === '00' ? n !== TRACEPARENT_LENGTH : n > TRACEPARENT_LENGTH && header.charCodeAt(55) !== 0x2d)
    return { ok: false, reason: 'bad_length' };
  if (header.charCodeAt(2) !== 0x2d || header.charCodeAt(35) !== 0x2d || header.charCodeAt(52) !== 0x2d)
    return { ok: false, reason: 'bad_format' };
  const trace = hexRun(header, 3, 32);
  const span = hexRun(header, 36, 16);
  if (!trace.hex || !span.hex || !hexRun(header, 53, 2).hex) return { ok: false, reason: 'bad_format' };
  if (trace.zero) return { ok: false, reason: 'zero_trace_id' };
  if (span.zero) return { ok: false, reason: 'zero_span_id' };
  const traceFlags = parseInt(header.slice(53, 55), 16);
  return {
    ok: true,
    value: {
      version,
      traceId: header.slice(3, 35),
      spanId: header.slice(36, 52),
      traceFlags,
      sampled: (traceFlags & 1) === 1,
    },
  };
}

/**
 * Write a `traceparent` in the version-00 form (a later version's extra fields are not carried).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { formatTraceparent } from 'mcpware/lib';
 *
 * const header = formatTraceparent({
 *   traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
 *   spanId: '00f067aa0ba902b7',
 *   traceFlags: 1,
 * });
 * console.log(header); // 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
 * ```
 */
export function formatTraceparent(tp: Pick<TraceParent, 'traceId' | 'spanId' | 'traceFlags'>): string {
  return `00-${tp.traceId}-${tp.spanId}-${(tp.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** lcalpha / DIGIT / `_` / `-` / `*` / `/`: the characters after the first of a tracestate key part. */
function isKeyChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x5f ||
    c === 0x2d ||
    c === 0x2a ||
    c === 0x2f
  );
}

/** True when `s[from, to)` is one start character (per `first`) then key characters, at most `max` in all. */
function keyPart(s: string, from: number, to: number, max: number, first: (c: number) => boolean): boolean {
  if (to <= from || to - from > max || !first(s.charCodeAt(from))) return false;
  for (let i = from + 1; i < to; i++) if (!isKeyChar(s.charCodeAt(i))) return false;
  return true;
}

const isLcAlpha = (c: number): boolean => c >= 0x61 && c <= 0x7a;
const isLcAlphaOrDigit = (c: number): boolean => isLcAlpha(c) || (c >= 0x30 && c <= 0x39);

/**
 * A tracestate key: `lcalpha 0*255(keychar)`, or multi-tenant `tenant@system` with a tenant of
 * `(lcalpha / DIGIT) 0*240(keychar)` and a system of `lcalpha 0*13(keychar)`.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isTracestateKey } from 'mcpware/lib';
 *
 * console.log(isTracestateKey('rojo'), isTracestateKey('fw529a3039@dt'), isTracestateKey('Rojo')); // true true false
 * ```
 */
export function isTracestateKey(key: string): boolean {
  const at = key.indexOf('@');
  if (at === -1) return keyPart(key, 0, key.length, 256, isLcAlpha);
  return keyPart(key, 0, at, 241, isLcAlphaOrDigit) && keyPart(key, at + 1, key.length, 14, isLcAlpha);
}

/**
 * A tracestate value: 1–256 printable ASCII characters other than `,` and `=`, not ending with a space.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { isTracestateValue } from 'mcpware/lib';
 *
 * console.log(isTracestateValue('t61rcWkgMzE'), isTracestateValue('a=b')); // true false
 * ```
 */
export function isTracestateValue(value: string): boolean {
  const n = value.length;
  if (n === 0 || n > 256 || value.charCodeAt(n - 1) === 0x20) return false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x2c || c === 0x3d) return false;
  }
  return true;
}

/** Drop spaces and tabs (OWS) at both ends. */
function trimOws(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--;
  return s.slice(a, b);
}

/**
 * Read a W3C `tracestate`: comma-separated `key=value` list-members with optional spaces and tabs around each,
 * empty members skipped. Refused whole when longer than {@link MAX_TRACESTATE_LENGTH}, with more than
 * {@link MAX_TRACESTATE_MEMBERS} members, with a member, key or value off the grammar, or with a key twice.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { parseTracestate } from 'mcpware/lib';
 *
 * const r = parseTracestate('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
 * if (r.ok) console.log(r.entries.map((e) => e.key)); // [ 'rojo', 'congo' ]
 * ```
 */
export function parseTracestate(header: unknown): TracestateResult {
  if (header === undefined) return { ok: false, reason: 'absent' };
  if (typeof header !== 'string') return { ok: false, reason: 'not_string' };
  if (header.length > MAX_TRACESTATE_LENGTH) return { ok: false, reason: 'too_long' };
  const entries: TracestateEntry[] = [];
  const seen = new Set<string>();
  for (const raw of header.split(',')) {
    const member = trimOws(raw);
    if (member.length === 0) continue;
    if (entries.length === MAX_TRACESTATE_MEMBERS) return { ok: false, reason: 'too_many_members' };
    const eq = member.indexOf('=');
    if (eq === -1) return { ok: false, reason: 'bad_member' };
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!isTracestateKey(key)) return { ok: false, reason: 'bad_key' };
    if (!isTracestateValue(value)) return { ok: false, reason: 'bad_value' };
    if (seen.has(key)) return { ok: false, reason: 'duplicate_key' };
    seen.add(key);
    entries.push({ key, value });
  }
  return { ok: true, entries };
}

/**
 * Write `tracestate` list-members as one header value (`key=value` joined by `,`).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { formatTracestate } from 'mcpware/lib';
 *
 * console.log(formatTracestate([{ key: 'rojo', value: '00f067aa0ba902b7' }])); // rojo=00f067aa0ba902b7
 * ```
 */
export function formatTracestate(entries: readonly TracestateEntry[]): string {
  return entries.map((e) => `${e.key}=${e.value}`).join(',');
}

/** A baggage-octet: printable ASCII other than space, `"`, `,`, `;` and `\`. */
function isBaggageOctet(c: number): boolean {
  return c >= 0x21 && c <= 0x7e && c !== 0x22 && c !== 0x2c && c !== 0x3b && c !== 0x5c;
}

function isBaggageValue(v: string): boolean {
  for (let i = 0; i < v.length; i++) if (!isBaggageOctet(v.charCodeAt(i))) return false;
  return true;
}

const lenientUtf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const utf8 = new TextEncoder();

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** Percent-decode a baggage value (`%XX` is a byte, a `%` not followed by two hex digits is itself). */
function percentDecode(v: string): string {
  if (!v.includes('%')) return v;
  const bytes = new Uint8Array(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const hi = c === 0x25 && i + 2 < v.length ? hexValue(v.charCodeAt(i + 1)) : -1;
    const lo = hi === -1 ? -1 : hexValue(v.charCodeAt(i + 2));
    if (lo !== -1) {
      bytes[n++] = hi * 16 + lo;
      i += 2;
    } else bytes[n++] = c;
  }
  return lenientUtf8.decode(bytes.subarray(0, n));
}

/** A `key OWS "=" OWS value` piece (`key` alone too where `bare` allows), trimmed, or why it is not one. */
function keyValue(
  piece: string,
  bare: boolean,
): { ok: true; key: string; value?: string } | { ok: false; reason: 'bad_key' | 'bad_value' } {
  const eq = piece.indexOf('=');
  const key = trimOws(eq === -1 ? piece : piece.slice(0, eq));
  if (!isToken(key)) return { ok: false, reason: 'bad_key' };
  if (eq === -1) return bare ? { ok: true, key } : { ok: false, reason: 'bad_value' };
  const value = trimOws(piece.slice(eq + 1));
  return isBaggageValue(value) ? { ok: true, key, value } : { ok: false, reason: 'bad_value' };
}

/** One baggage list-member with its properties, or why it is refused. */
function baggageMember(
  member: string,
): { ok: true; entry: BaggageEntry } | { ok: false; reason: BaggageReason } {
  const [head = '', ...props] = member.split(';');
  if (trimOws(head).length === 0) return { ok: false, reason: 'bad_member' };
  const kv = keyValue(head, false);
  if (!kv.ok) return kv;
  const properties: BaggageProperty[] = [];
  for (const p of props) {
    const prop = keyValue(p, true);
    if (!prop.ok) return { ok: false, reason: 'bad_property' };
    properties.push(prop.value === undefined ? { key: prop.key } : { key: prop.key, value: prop.value });
  }
  return { ok: true, entry: { key: kv.key, value: percentDecode(kv.value ?? ''), properties } };
}

/**
 * Read a W3C `baggage` value: comma-separated `key=value` list-members, each with `;`-separated properties
 * (`key` or `key=value`), spaces and tabs allowed around the separators; keys are HTTP tokens, values
 * baggage-octets, percent-decoded as UTF-8. Refused whole when longer than {@link MAX_BAGGAGE_BYTES}, with more
 * than {@link MAX_BAGGAGE_MEMBERS} members, or with anything off the grammar (an empty member included).
 * @see docs/lib.md
 * @example
 * ```ts
 * import { parseBaggage } from 'mcpware/lib';
 *
 * const r = parseBaggage('userId=alice,serverNode=DF%2028;region=eu');
 * if (r.ok) console.log(r.entries[1]); // { key: 'serverNode', value: 'DF 28', properties: [ { key: 'region', value: 'eu' } ] }
 * ```
 */
export function parseBaggage(header: unknown): BaggageResult {
  if (header === undefined) return { ok: false, reason: 'absent' };
  if (typeof header !== 'string') return { ok: false, reason: 'not_string' };
  // Every accepted character is ASCII, so the length in characters is the length in bytes.
  if (header.length > MAX_BAGGAGE_BYTES) return { ok: false, reason: 'too_long' };
  const entries: BaggageEntry[] = [];
  for (const member of header.split(',')) {
    if (entries.length === MAX_BAGGAGE_MEMBERS) return { ok: false, reason: 'too_many_members' };
    const m = baggageMember(member);
    if (!m.ok) return m;
    entries.push(m.entry);
  }
  return { ok: true, entries };
}

/** Percent-encode a value: every character that is not a baggage-octet, and `%` itself, as UTF-8 `%XX`. */
function percentEncode(v: string): string {
  let out = '';
  for (const ch of v) {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && isBaggageOctet(c) && c !== 0x25) out += ch;
    else for (const b of utf8.encode(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Write baggage members as one header value: values percent-encoded, properties as given.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { formatBaggage } from 'mcpware/lib';
 *
 * console.log(formatBaggage([{ key: 'serverNode', value: 'DF 28', properties: [] }])); // serverNode=DF%2028
 * ```
 */
export function formatBaggage(entries: readonly BaggageEntry[]): string {
  return entries
    .map((e) => {
      const props = e.properties.map((p) => (p.value === undefined ? `;${p.key}` : `;${p.key}=${p.value}`));
      return `${e.key}=${percentEncode(e.value)}${props.join('')}`;
    })
    .join(',');
}

/**
 * Read the W3C keys of a request's `params._meta`: `traceparent`, `tracestate` and `baggage`, each answered on
 * its own (`absent` when the key is missing or `meta` is not an object). A `tracestate` is read only beside a
 * valid `traceparent` (`no_traceparent` otherwise), as Trace Context requires.
 * @see docs/lib.md
 * @example
 * ```ts
 * import { readTraceMeta } from 'mcpware/lib';
 *
 * const t = readTraceMeta({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
 * console.log(t.traceparent.ok, t.tracestate.ok && t.tracestate.entries.length); // true false
 * ```
 */
export function readTraceMeta(meta: unknown): TraceMeta {
  // Only an own data property is read: a getter is never run, and a proxy whose traps throw reads as absent.
  const member = (key: string): unknown => {
    try {
      if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
      const d = Object.getOwnPropertyDescriptor(meta, key);
      return d !== undefined && 'value' in d ? d.value : undefined;
    } catch {
      return undefined;
    }
  };
  const traceparent = parseTraceparent(member('traceparent'));
  const rawState = member('tracestate');
  const tracestate: TracestateResult =
    rawState === undefined
      ? { ok: false, reason: 'absent' }
      : traceparent.ok
        ? parseTracestate(rawState)
        : { ok: false, reason: 'no_traceparent' };
  return { traceparent, tracestate, baggage: parseBaggage(member('baggage')) };
}

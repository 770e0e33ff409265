/**
 * Canonical JSON (RFC 8785 style) and the SHA-256 digest over it, for recording what a call's arguments were
 * without recording the arguments. Pure: no I/O.
 * @see docs/middleware/audit.md
 */
import { hash } from 'node:crypto';

/** Deepest nesting serialized by {@link canonicalJson} before a subtree is replaced by `"[too_deep]"`. */
export const CANONICAL_MAX_DEPTH = 128;

/**
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, ECMAScript number form; `undefined`
 * and function members skipped. Depth-bounded, so a deep value cannot overflow the stack.
 */
export function canonicalJson(v: unknown, maxDepth: number = CANONICAL_MAX_DEPTH): string {
  return canonical(v, 0, maxDepth);
}

function canonical(x: unknown, depth: number, maxDepth: number): string {
  if (typeof x === 'string') return JSON.stringify(x);
  if (typeof x === 'number') return Number.isFinite(x) ? JSON.stringify(x) : 'null';
  if (x === null || typeof x === 'boolean') return JSON.stringify(x);
  if (typeof x === 'bigint') return x.toString();
  if (typeof x !== 'object') return 'null';
  if (depth >= maxDepth) return '"[too_deep]"';
  if (Array.isArray(x)) return canonicalArray(x, depth, maxDepth);
  const o = x as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (const k of keys) {
    const val = o[k];
    if (val === undefined || typeof val === 'function') continue;
    if (out.length > 1) out += ',';
    out += JSON.stringify(k) + ':' + canonical(val, depth + 1, maxDepth);
  }
  return out + '}';
}

/** An array: a hole stays empty between its commas, an `undefined` element is `null`. */
function canonicalArray(x: readonly unknown[], depth: number, maxDepth: number): string {
  let out = '[';
  for (let i = 0; i < x.length; i++) {
    if (i > 0) out += ',';
    if (!(i in x)) continue;
    out += x[i] === undefined ? 'null' : canonical(x[i], depth + 1, maxDepth);
  }
  return out + ']';
}

/** SHA-256 hex of the canonical JSON of `v`. */
export function argumentsDigest(v: unknown): string {
  return hash('sha256', canonicalJson(v), 'hex');
}

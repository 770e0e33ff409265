/**
 * Opaque pagination cursors and the one paging rule shared by every list (`tools/list`, `resources/list`,
 * `resources/templates/list`, `prompts/list`).
 *
 * A cursor names the **last entry of the page it ends**: base64url (no padding) of the JSON
 * `{"v":1,"l":<list>,"k":<key>}`. Resuming looks that key up again, so an entry added ahead of the cursor is
 * served, one added behind it is never seen, and a cursor whose entry is gone (or hidden from this caller) is
 * refused rather than silently resolved to a neighbouring position. Cursors carry no secret: a forged cursor can
 * only name a position in the caller's own visible list, which the caller could reach by walking anyway.
 *
 * Pure: no I/O. Decoding is bounded (length first, then a strict alphabet check, then a canonical re-encode).
 */
import { isJsonObject } from './json.js';

/** The longest cursor accepted, in characters. Longer input is refused before any decoding. */
export const MAX_CURSOR_LENGTH = 4096;

/** Why a cursor was refused. Stable: tests and logs key on it. */
export type CursorRefusalReason =
  'cursor_too_long' | 'cursor_malformed' | 'cursor_wrong_list' | 'cursor_stale';

export interface CursorRefusal {
  readonly ok: false;
  readonly reason: CursorRefusalReason;
  /** One concise sentence, safe to send to the client (it never echoes the cursor). */
  readonly message: string;
}

export interface DecodedCursor {
  readonly ok: true;
  /** The list the cursor was minted for (`resources`, `prompts`, …), or `undefined` when minted without one. */
  readonly list: string | undefined;
  /** The key of the last entry of the page the cursor ended. */
  readonly key: string;
}

const refuse = (reason: CursorRefusalReason, message: string): CursorRefusal => ({
  ok: false,
  reason,
  message,
});

const encoder = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes → base64url without padding. */
function toBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Encode a cursor naming `key`. Returns `undefined` when the cursor would exceed {@link MAX_CURSOR_LENGTH}
 * (a key of roughly 3 KB or more); {@link paginate} then ends the page on an entry it can name.
 */
export function encodeCursor(key: string, list?: string): string | undefined {
  const payload = list === undefined ? { v: 1, k: key } : { v: 1, l: list, k: key };
  const out = toBase64Url(encoder.encode(JSON.stringify(payload)));
  return out.length <= MAX_CURSOR_LENGTH ? out : undefined;
}

// Strict base64url alphabet, bounded by MAX_CURSOR_LENGTH (a single character class: no backtracking).
const BASE64URL = /^[A-Za-z0-9_-]{1,4096}$/;

/**
 * Decode a cursor. Refuses (never throws) anything we could not have minted: too long, outside the base64url
 * alphabet, padded, non-canonical trailing bits, not UTF-8, not JSON, or not exactly `{v:1,l?,k}`.
 * `list`, when given, must equal the list the cursor was minted for.
 */
export function decodeCursor(cursor: string, list?: string): DecodedCursor | CursorRefusal {
  if (cursor.length > MAX_CURSOR_LENGTH) return refuse('cursor_too_long', 'Invalid cursor: it is too long');
  if (!BASE64URL.test(cursor) || cursor.length % 4 === 1) {
    return refuse('cursor_malformed', 'Invalid cursor: it is malformed');
  }
  const bytes = Buffer.from(cursor, 'base64url');
  // Node's decoder ignores stray trailing bits; re-encoding catches cursors that were edited by hand.
  if (bytes.toString('base64url') !== cursor)
    return refuse('cursor_malformed', 'Invalid cursor: it is malformed');
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(bytes));
  } catch {
    return refuse('cursor_malformed', 'Invalid cursor: it is malformed');
  }
  if (!isJsonObject(value)) {
    return refuse('cursor_malformed', 'Invalid cursor: it is malformed');
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const shapeOk =
    obj.v === 1 &&
    typeof obj.k === 'string' &&
    (obj.l === undefined || typeof obj.l === 'string') &&
    keys.every((k) => k === 'v' || k === 'k' || k === 'l');
  if (!shapeOk) return refuse('cursor_malformed', 'Invalid cursor: it is malformed');
  const minted = obj.l as string | undefined;
  if (list !== undefined && minted !== list) {
    return refuse('cursor_wrong_list', 'Invalid cursor: it belongs to another list');
  }
  return { ok: true, list: minted, key: obj.k as string };
}

export interface Page<T> {
  readonly ok: true;
  readonly page: T[];
  /** Present only when more entries follow; never `""`. */
  readonly nextCursor?: string;
}

/**
 * One page of `items`, resuming after the entry `cursor` names.
 *
 * - `pageSize` ≤ 0 (or not finite) means paging is off: everything from the cursor on, with no `nextCursor`.
 *   A cursor is still honoured when paging is off, so a client that kept one from before a config change is
 *   served consistently.
 * - An absent, `null` or empty cursor means the first page (we never mint `""`).
 * - The cursor's key is looked up by its **last** occurrence, so duplicate keys skip ahead and never loop.
 * - When the remaining entries fit in one page there is no `nextCursor`: a final full page carries none.
 * - A key too long to fit a cursor extends the page to the next entry that can be named (never happens with
 *   realistic names; it keeps a pathological entry from breaking the walk).
 */
export function paginate<T>(
  items: readonly T[],
  key: (item: T) => string,
  cursor: unknown,
  pageSize: number | undefined,
  list?: string,
): Page<T> | CursorRefusal {
  let start = 0;
  if (cursor !== undefined && cursor !== null && cursor !== '') {
    if (typeof cursor !== 'string') return refuse('cursor_malformed', 'Invalid cursor: it must be a string');
    const decoded = decodeCursor(cursor, list);
    if (!decoded.ok) return decoded;
    let at = -1;
    for (let i = items.length - 1; i >= 0; i--) {
      if (key(items[i]!) === decoded.key) {
        at = i;
        break;
      }
    }
    if (at < 0) return refuse('cursor_stale', 'Invalid cursor: the entry it points at is no longer listed');
    start = at + 1;
  }
  const size = pageSize !== undefined && Number.isFinite(pageSize) && pageSize > 0 ? Math.floor(pageSize) : 0;
  const remaining = items.length - start;
  if (size === 0 || remaining <= size) return { ok: true, page: items.slice(start) };
  let end = start + size;
  for (;;) {
    const next = encodeCursor(key(items[end - 1]!), list);
    if (next !== undefined) return { ok: true, page: items.slice(start, end), nextCursor: next };
    end++;
    if (end >= items.length) return { ok: true, page: items.slice(start) };
  }
}

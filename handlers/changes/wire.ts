/**
 * The change feed's messages on a Redis channel: one JSON object per announcement, with a version, the id of the
 * feed that announced it, and the event. Decoding checks every part: the channel is shared with whatever else can
 * publish to it, so a message that is not exactly this shape is dropped with a stable reason, never delivered.
 *
 *   {"v":1,"from":"3f9c0a1b2c3d4e5f","type":"listChanged"}
 *   {"v":1,"from":"3f9c0a1b2c3d4e5f","type":"updated","uri":"notes://today"}
 *
 * The same channel carries legacy cancellations between replicas (dispatch's `cancellation.relay`):
 *
 *   {"v":1,"from":"3f9c0a1b2c3d4e5f","type":"cancelled","principal":"[…]","session":null,"requestId":7}
 *
 * and legacy sessions' subscriptions (read by the session's GET stream on any replica):
 *
 *   {"v":1,"from":"3f9c…","type":"subscription","session":"s1.…","principal":"[…]","expiresAt":1767225600000,
 *    "uri":"notes://today","subscribed":true}
 */
import {
  type CancellationMessage,
  type ChangeEvent,
  MAX_CANCEL_PRINCIPAL_LENGTH,
  MAX_CANCEL_REQUEST_ID_LENGTH,
  MAX_CANCEL_SESSION_LENGTH,
  MAX_RELAYED_SESSION_LENGTH,
  MAX_RELAYED_URI_LENGTH,
  type SubscriptionMessage,
} from '../../core/change-feed.js';
import { isJsonObject } from '../../lib/json.js';

/** The version this code writes and the only one it reads. */
export const WIRE_VERSION = 1;
/** Longest message read or written, in bytes (UTF-8). */
export const MAX_WIRE_BYTES = 16 * 1024;
/** Longest URI an `updated` message carries, in characters. */
export const MAX_WIRE_URI_LENGTH = 8192;
/** A feed's id: what `from` must look like. */
const ORIGIN = /^[0-9a-f]{16,64}$/;

/** Why a message read from the channel was dropped. */
export type WireDropReason = 'too_large' | 'not_json' | 'unknown_version' | 'bad_shape';

export type WireDecoded =
  | { ok: true; from: string; event: ChangeEvent; cancellation?: undefined; subscription?: undefined }
  | { ok: true; from: string; cancellation: CancellationMessage; event?: undefined; subscription?: undefined }
  | { ok: true; from: string; subscription: SubscriptionMessage; event?: undefined; cancellation?: undefined }
  | { ok: false; reason: WireDropReason };

export type WireEncoded = { ok: true; message: string } | { ok: false; reason: 'too_large' };

/** The message announcing `event` from the feed `from`, unless it would be larger than {@link MAX_WIRE_BYTES}. */
export function encodeWire(from: string, event: ChangeEvent): WireEncoded {
  if (event.type === 'updated' && event.uri.length > MAX_WIRE_URI_LENGTH)
    return { ok: false, reason: 'too_large' };
  const body =
    event.type === 'updated'
      ? { v: WIRE_VERSION, from, type: event.type, uri: event.uri }
      : { v: WIRE_VERSION, from, type: event.type };
  const message = JSON.stringify(body);
  if (Buffer.byteLength(message, 'utf8') > MAX_WIRE_BYTES) return { ok: false, reason: 'too_large' };
  return { ok: true, message };
}

/** Whether `m` is a cancellation this code writes and reads: every part present and within its bound. */
export function isWireCancellation(m: CancellationMessage): boolean {
  const { principal, session, requestId } = m;
  return (
    typeof principal === 'string' &&
    principal !== '' &&
    principal.length <= MAX_CANCEL_PRINCIPAL_LENGTH &&
    (session === null ||
      (typeof session === 'string' && session !== '' && session.length <= MAX_CANCEL_SESSION_LENGTH)) &&
    ((typeof requestId === 'string' && requestId.length <= MAX_CANCEL_REQUEST_ID_LENGTH) ||
      (typeof requestId === 'number' && Number.isSafeInteger(requestId)))
  );
}

/** The message passing cancellation `c` from the feed `from`, unless a part is out of bounds. */
export function encodeCancellation(from: string, c: CancellationMessage): WireEncoded {
  if (!isWireCancellation(c)) return { ok: false, reason: 'too_large' };
  const { principal, session, requestId } = c;
  const message = JSON.stringify({ v: WIRE_VERSION, from, type: 'cancelled', principal, session, requestId });
  if (Buffer.byteLength(message, 'utf8') > MAX_WIRE_BYTES) return { ok: false, reason: 'too_large' };
  return { ok: true, message };
}

/** Whether `m` is a subscription this code writes and reads: every part present and within its bound. */
export function isWireSubscription(m: SubscriptionMessage): boolean {
  const { session, principal, expiresAt, uri, subscribed } = m;
  return (
    typeof session === 'string' &&
    session !== '' &&
    session.length <= MAX_RELAYED_SESSION_LENGTH &&
    typeof principal === 'string' &&
    principal !== '' &&
    principal.length <= MAX_CANCEL_PRINCIPAL_LENGTH &&
    typeof expiresAt === 'number' &&
    Number.isSafeInteger(expiresAt) &&
    typeof uri === 'string' &&
    uri !== '' &&
    uri.length <= MAX_RELAYED_URI_LENGTH &&
    typeof subscribed === 'boolean'
  );
}

/** The message passing subscription `m` from the feed `from`, unless a part is out of bounds. */
export function encodeSubscription(from: string, m: SubscriptionMessage): WireEncoded {
  if (!isWireSubscription(m)) return { ok: false, reason: 'too_large' };
  const { session, principal, expiresAt, uri, subscribed } = m;
  const message = JSON.stringify({
    v: WIRE_VERSION,
    from,
    type: 'subscription',
    session,
    principal,
    expiresAt,
    uri,
    subscribed,
  });
  if (Buffer.byteLength(message, 'utf8') > MAX_WIRE_BYTES) return { ok: false, reason: 'too_large' };
  return { ok: true, message };
}

/** The subscription in a decoded object of type `subscription`, if it is exactly one. */
function subscriptionOf(o: Record<string, unknown>): SubscriptionMessage | undefined {
  if (Object.keys(o).length !== 8) return undefined;
  const get = (k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
  const m = {
    session: get('session'),
    principal: get('principal'),
    expiresAt: get('expiresAt'),
    uri: get('uri'),
    subscribed: get('subscribed'),
  } as SubscriptionMessage;
  return isWireSubscription(m) ? m : undefined;
}

/** The announcement a message carries, or why it is dropped. Never throws. */
export function decodeWire(message: unknown): WireDecoded {
  if (typeof message !== 'string') return { ok: false, reason: 'bad_shape' };
  // A UTF-16 length above the byte cap is over it whatever the encoding; below it, count the bytes.
  if (message.length > MAX_WIRE_BYTES || Buffer.byteLength(message, 'utf8') > MAX_WIRE_BYTES)
    return { ok: false, reason: 'too_large' };
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return { ok: false, reason: 'not_json' };
  }
  if (!isJsonObject(value)) return { ok: false, reason: 'bad_shape' };
  const o = value as Record<string, unknown>;
  if (!Object.hasOwn(o, 'v') || typeof o.v !== 'number') return { ok: false, reason: 'bad_shape' };
  if (o.v !== WIRE_VERSION) return { ok: false, reason: 'unknown_version' };
  const from = Object.hasOwn(o, 'from') ? o.from : undefined;
  if (typeof from !== 'string' || !ORIGIN.test(from)) return { ok: false, reason: 'bad_shape' };
  const keys = Object.keys(o).length;
  if (Object.hasOwn(o, 'type') && o.type === 'listChanged' && keys === 3) {
    return { ok: true, from, event: { type: 'listChanged' } };
  }
  if (Object.hasOwn(o, 'type') && o.type === 'updated' && keys === 4 && Object.hasOwn(o, 'uri')) {
    const uri = o.uri;
    if (typeof uri === 'string' && uri !== '' && uri.length <= MAX_WIRE_URI_LENGTH)
      return { ok: true, from, event: { type: 'updated', uri } };
  }
  if (Object.hasOwn(o, 'type') && o.type === 'cancelled' && keys === 6) {
    const c = {
      principal: Object.hasOwn(o, 'principal') ? o.principal : undefined,
      session: Object.hasOwn(o, 'session') ? o.session : undefined,
      requestId: Object.hasOwn(o, 'requestId') ? o.requestId : undefined,
    } as CancellationMessage;
    if (isWireCancellation(c)) return { ok: true, from, cancellation: c };
  }
  if (Object.hasOwn(o, 'type') && o.type === 'subscription') {
    const subscription = subscriptionOf(o);
    if (subscription !== undefined) return { ok: true, from, subscription };
  }
  return { ok: false, reason: 'bad_shape' };
}

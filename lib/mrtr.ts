/**
 * Multi-round-trip requests (MCP 2026-07-28 "MRTR"): input-required results, the client's input responses, and
 * integrity-protected `requestState`.
 *
 * - A handler of `tools/call`, `prompts/get` or `resources/read` may answer `{resultType: "input_required",
 *   inputRequests, requestState}`; the client retries the same request (new id) with `inputResponses` (same keys)
 *   and the echoed `requestState`.
 * - `requestState` is attacker-controlled. mcpware signs it: HMAC-SHA256 over the state plus what it is bound to
 *   (the principal, the method, a digest of the params without `inputResponses`, `requestState` and `_meta`, and
 *   an expiry), verified in constant time before anything in it is parsed. It is signed, not encrypted: the client
 *   can read it, so never put secrets in it.
 *
 * Pure: no I/O (node:crypto's HMAC and hashes are computations).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { JsonObject } from './jsonrpc.js';
import { clip } from './clip.js';
import { isJsonObject } from './json.js';
import { openToken, signToken } from './signed-token.js';
import { formatTraceparent, parseTraceparent } from './trace-context.js';

/** The client capability each input request method needs (2026-07-28 `InputRequest`). */
export const INPUT_REQUEST_CAPABILITY: Readonly<Record<string, string>> = Object.freeze({
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
});

/** One request for client input: an `elicitation/create`, `sampling/createMessage` or `roots/list` request. */
export interface InputRequest {
  method: string;
  params?: JsonObject;
}

/** The input-required result (2026-07-28 `InputRequiredResult`) as a handler returns it. */
export interface InputRequiredResult {
  resultType: 'input_required';
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
  _meta?: JsonObject;
}

/** True when a handler's value is an input-required result (by its `resultType`). */
export function isInputRequiredResult(v: unknown): v is InputRequiredResult {
  return isJsonObject(v) && v.resultType === 'input_required';
}

/** An `elicitation/create` input request (form mode). */
export function elicitationRequest(message: string, requestedSchema: JsonObject): InputRequest {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } };
}

/** A `sampling/createMessage` input request. `params` needs at least `messages` and `maxTokens`. */
export function samplingRequest(params: JsonObject): InputRequest {
  return { method: 'sampling/createMessage', params };
}

/** A `roots/list` input request. */
export function listRootsRequest(): InputRequest {
  return { method: 'roots/list', params: {} };
}

export type InputRequiredCheck =
  | { ok: true }
  | { ok: false; reason: 'malformed'; message: string }
  | { ok: false; reason: 'missing_capability'; requiredCapabilities: Record<string, JsonObject> };

/**
 * Check an input-required result before it is sent: the shape the schema asks for (at least one of
 * `inputRequests` or `requestState`; every request `{method: string, params?: object}`), and — the spec's MUST —
 * no request for a capability the client did not declare. `clientCapabilities` of `undefined` skips that check
 * (legacy requests cannot tell; their capabilities were declared in a forgotten `initialize`).
 */
export function checkInputRequired(
  v: InputRequiredResult,
  clientCapabilities: JsonObject | undefined,
): InputRequiredCheck {
  const reqs = v.inputRequests;
  if (reqs === undefined && v.requestState === undefined) {
    return {
      ok: false,
      reason: 'malformed',
      message: 'an input-required result needs inputRequests or requestState',
    };
  }
  if (v.requestState !== undefined && typeof v.requestState !== 'string') {
    return { ok: false, reason: 'malformed', message: 'requestState must be a string' };
  }
  if (reqs === undefined) return { ok: true };
  if (!isJsonObject(reqs))
    return { ok: false, reason: 'malformed', message: 'inputRequests must be an object' };
  const missing: Record<string, JsonObject> = {};
  let anyMissing = false;
  for (const key of Object.keys(reqs)) {
    const r = reqs[key];
    if (
      !isJsonObject(r) ||
      typeof r.method !== 'string' ||
      (r.params !== undefined && !isJsonObject(r.params))
    ) {
      return {
        ok: false,
        reason: 'malformed',
        message: `inputRequests["${clip(key)}"] must be {method: string, params?: object}`,
      };
    }
    const cap = INPUT_REQUEST_CAPABILITY[r.method];
    if (cap === undefined) {
      return {
        ok: false,
        reason: 'malformed',
        message: `inputRequests["${clip(key)}"] has method "${clip(r.method)}", not an input request method`,
      };
    }
    if (clientCapabilities !== undefined && !isJsonObject(clientCapabilities[cap])) {
      missing[cap] = {};
      anyMissing = true;
    }
  }
  return anyMissing
    ? { ok: false, reason: 'missing_capability', requiredCapabilities: missing }
    : { ok: true };
}

/** The client capabilities among `required` that `declared` lacks (`undefined` when none is missing). */
export function missingCapabilities(
  required: Readonly<Record<string, unknown>>,
  declared: JsonObject,
): Record<string, JsonObject> | undefined {
  let out: Record<string, JsonObject> | undefined;
  for (const cap of Object.keys(required)) {
    if (!isJsonObject(declared[cap]))
      (out ??= {})[cap] = isJsonObject(required[cap]) ? (required[cap] as JsonObject) : {};
  }
  return out;
}

export type InputResponsesRead =
  | { ok: true; present: boolean; responses: Record<string, JsonObject>; dropped: string[] }
  | { ok: false; message: string };

/**
 * Read `params.inputResponses`: absent → none; not an object (including `null`) → a protocol error. Entries whose
 * value is not an object are dropped (listed in `dropped`): the handler then sees them as missing and asks again,
 * as the spec prefers to an error.
 */
export function readInputResponses(v: unknown, present: boolean): InputResponsesRead {
  if (!present) return { ok: true, present: false, responses: {}, dropped: [] };
  if (!isJsonObject(v)) return { ok: false, message: 'Invalid params: "inputResponses" must be an object' };
  const responses: Record<string, JsonObject> = Object.create(null) as Record<string, JsonObject>;
  const dropped: string[] = [];
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (isJsonObject(x)) responses[k] = x;
    else dropped.push(k);
  }
  return { ok: true, present: true, responses, dropped };
}

// ---------------------------------------------------------------------------------------------------------------
// requestState

/** What a `requestState` is bound to. */
export interface StateBinding {
  /** Who asked: `principalKey()` (lib/principal.ts) of the request's principal. */
  principal: string;
  /** The JSON-RPC method. */
  method: string;
  /** {@link paramsDigest} of the request's params. */
  digest: string;
}

export type StateVerifyReason =
  | 'malformed'
  | 'too_large'
  | 'bad_signature'
  | 'expired'
  | 'wrong_principal'
  | 'wrong_method'
  | 'wrong_params';

export type StateVerifyResult =
  | {
      ok: true;
      state: unknown;
      expiresAt: number;
      /** The span context of the round that minted the token, as a canonical W3C traceparent (when traced). */
      trace?: string;
    }
  | { ok: false; reason: StateVerifyReason };

const TOKEN_VERSION = 'v1';
/** Longest token accepted (characters) before anything is computed. */
export const MAX_REQUEST_STATE_LENGTH = 65536;
/** Shortest HMAC key accepted, in bytes. */
export const MIN_STATE_KEY_BYTES = 32;

/** The members of params that change between the rounds of one request, left out of the digest. */
const ROUND_MEMBERS = new Set(['inputResponses', 'requestState', '_meta']);

/** SHA-256 (base64url) of the canonical params without `inputResponses`, `requestState` and `_meta`. */
export function paramsDigest(params: JsonObject | undefined): string {
  const kept: JsonObject = {};
  if (params) for (const k of Object.keys(params)) if (!ROUND_MEMBERS.has(k)) kept[k] = params[k];
  return createHash('sha256').update(canonicalJson(kept)).digest('base64url');
}

function hashPrincipal(p: string): string {
  return p === ''
    ? ''
    : createHash('sha256')
        .update('mcpware-principal\u0000' + p)
        .digest('base64url')
        .slice(0, 22);
}

/** A W3C traceparent re-formatted in its canonical version-00 form (55 characters), or undefined. */
function canonicalTraceparent(v: unknown): string | undefined {
  const r = parseTraceparent(v);
  return r.ok ? formatTraceparent(r.value) : undefined;
}

/**
 * Sign `state` (any JSON value, or `undefined` for none) bound to `binding`, valid until `expiresAt` (ms since the
 * epoch). The token is `v1.<payload>.<mac>`, both base64url. `trace`, the minting round's span context as a W3C
 * traceparent, travels along (canonical, 55 characters; dropped when it does not parse) so that the retry's span
 * can link to it.
 */
export function signRequestState(
  state: unknown,
  binding: StateBinding,
  key: Uint8Array,
  expiresAt: number,
  trace?: string,
): string {
  const payload: Record<string, unknown> = {
    m: binding.method,
    d: binding.digest,
    u: hashPrincipal(binding.principal),
    e: Math.floor(expiresAt),
  };
  if (state !== undefined) payload.s = state;
  const t = trace === undefined ? undefined : canonicalTraceparent(trace);
  if (t !== undefined) payload.t = t;
  return signToken(TOKEN_VERSION, payload, key);
}

/**
 * Verify a token against every key (the first one signs; the others are older keys still accepted during a
 * rotation), then check it is unexpired and bound to this principal, method and params. The MAC is checked in
 * constant time before the payload is decoded, so unauthenticated input is never parsed.
 */
export function verifyRequestState(
  token: unknown,
  binding: StateBinding,
  keys: readonly Uint8Array[],
  now: number,
): StateVerifyResult {
  const opened = openToken(token, TOKEN_VERSION, MAX_REQUEST_STATE_LENGTH, keys);
  if (!opened.ok) return opened;
  const payload = opened.payload;
  if (!isJsonObject(payload) || typeof payload.e !== 'number' || typeof payload.m !== 'string') {
    return { ok: false, reason: 'malformed' };
  }
  if (now >= payload.e) return { ok: false, reason: 'expired' };
  if (payload.u !== hashPrincipal(binding.principal)) return { ok: false, reason: 'wrong_principal' };
  if (payload.m !== binding.method) return { ok: false, reason: 'wrong_method' };
  if (payload.d !== binding.digest) return { ok: false, reason: 'wrong_params' };
  const out: StateVerifyResult = { ok: true, state: payload.s, expiresAt: payload.e };
  const trace = canonicalTraceparent(payload.t);
  if (trace !== undefined) out.trace = trace;
  return out;
}

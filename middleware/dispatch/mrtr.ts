/**
 * Multi-round-trip requests in the dispatcher: the `requestState` codec (HMAC-signed with the configured keys,
 * bound to the caller, the method and the params; lib/mrtr.ts does the signing), reading a round's
 * `inputResponses` and `requestState`, and checking the input-required results handlers return.
 *
 * @see docs/guides/input-required.md
 */
import { type Era, ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import {
  type InputRequiredResult,
  MIN_STATE_KEY_BYTES,
  type StateBinding,
  type StateVerifyResult,
  checkInputRequired,
  paramsDigest,
  readInputResponses,
  signRequestState,
  verifyRequestState,
} from '../../lib/mrtr.js';
import { INPUT_REQUIRED_METHODS, routeKey } from '../../lib/routing.js';
import type { InputRequiredRequest } from '../../core/contract.js';
import { log } from '../../core/log.js';
import { traceOf } from '../../core/trace.js';
import type { Logger, RequestLocals } from '../../core/types.js';
import { missingCapabilityError } from './rpc-errors.js';
import { clip } from '../../lib/clip.js';

/** Signs and verifies `requestState` tokens. */
export interface StateCodec {
  /**
   * A token for `state` (any JSON value, or `undefined`), valid for the configured time; `trace` (the minting
   * round's span context, a W3C traceparent) travels in it.
   */
  mint(state: unknown, binding: StateBinding, trace?: string): string;
  /** The state a token carries, or the fixed reason it is refused. */
  verify(token: unknown, binding: StateBinding): StateVerifyResult;
}

/** `keys`: the first signs, all verify (rotation); each at least 32 bytes. */
export function createStateCodec(options: { keys: readonly Uint8Array[]; ttlMs: number }): StateCodec {
  const { keys, ttlMs } = options;
  if (keys.length === 0 || keys.some((k) => k.length < MIN_STATE_KEY_BYTES)) {
    throw new RangeError(`requestState keys must be at least ${MIN_STATE_KEY_BYTES} bytes`);
  }
  return {
    mint: (state, binding, trace) => signRequestState(state, binding, keys[0]!, Date.now() + ttlMs, trace),
    verify: (token, binding) => verifyRequestState(token, binding, keys, Date.now()),
  };
}

/** Who and what a round belongs to. */
export interface RoundScope {
  readonly method: string;
  /** Whether the method may answer input-required ({@link allowsInputRequired}). */
  readonly inputRequired: boolean;
  readonly era: Era;
  /** principalKey() of the caller. */
  readonly principal: string;
  readonly clientCapabilities: JsonObject;
  /** The request's reply, when the scope is a request's call: its locals hold the request's trace. */
  readonly reply?: { readonly locals: RequestLocals };
}

/** One round's params and the MRTR members read from them (or handed over, in a legacy round). */
export interface RoundInput {
  params: JsonObject;
  inputResponses?: Readonly<Record<string, JsonObject>>;
  requestState?: unknown;
}

const INPUT_REQUIRED_ROUTES: ReadonlySet<string> = new Set(INPUT_REQUIRED_METHODS.map(routeKey));

/** Whether the method of a route key may answer input-required (tools/call, prompts/get, resources/read). */
export function allowsInputRequired(key: string): boolean {
  return INPUT_REQUIRED_ROUTES.has(key);
}

const bindingOf = (scope: RoundScope, params: JsonObject): StateBinding => ({
  principal: scope.principal,
  method: scope.method,
  digest: paramsDigest(params),
});

/**
 * Read a round's `inputResponses` and `requestState` on the methods that allow them. Throws -32602 for a
 * malformed `inputResponses` or a `requestState` that fails verification.
 */
export function readRound(
  codec: StateCodec,
  scope: RoundScope,
  params: JsonObject,
  logger: Logger,
): RoundInput {
  const out: RoundInput = { params };
  if (!scope.inputRequired) return out;
  const responses = readInputResponses(params.inputResponses, Object.hasOwn(params, 'inputResponses'));
  if (!responses.ok) throw new McpError(ErrorCode.InvalidParams, responses.message);
  if (responses.present) out.inputResponses = Object.freeze(responses.responses);
  if (Object.hasOwn(params, 'requestState')) {
    const v = codec.verify(params.requestState, bindingOf(scope, params));
    if (!v.ok) {
      log(logger, 'warn', 'dispatch: requestState refused', {
        method: clip(scope.method, 128),
        reason: v.reason,
      });
      const expired = v.reason === 'expired';
      throw new McpError(
        ErrorCode.InvalidParams,
        expired
          ? 'Invalid params: requestState has expired; send the request again without it'
          : 'Invalid params: requestState failed verification',
        { reason: expired ? 'expired' : 'invalid' },
      );
    }
    out.requestState = v.state;
    // The conventions make each round a span of its own, parented by the client's _meta: a link joins them.
    if (v.trace !== undefined)
      traceOf(scope.reply?.locals)?.link(v.trace, { 'mcpware.link': 'input_required' });
  }
  return out;
}

/** `ctx.inputRequired(request)`: the input-required result, its state signed. */
export function buildInputRequired(
  codec: StateCodec,
  scope: RoundScope,
  params: JsonObject,
  request: InputRequiredRequest,
): InputRequiredResult {
  if (request === null || typeof request !== 'object')
    throw new TypeError('inputRequired(): expected { inputRequests?, state? }');
  const out: InputRequiredResult = { resultType: 'input_required' };
  if (request.inputRequests !== undefined) out.inputRequests = request.inputRequests;
  if (request.state !== undefined || request.inputRequests === undefined) {
    let state: unknown;
    try {
      // A plain JSON copy: what is signed is exactly what comes back.
      state = request.state === undefined ? undefined : JSON.parse(JSON.stringify(request.state));
    } catch {
      throw new TypeError('inputRequired(): state must be JSON data');
    }
    out.requestState = codec.mint(state, bindingOf(scope, params), traceOf(scope.reply?.locals)?.traceparent);
  }
  const check = checkInputRequired(out, scope.era === 'modern' ? scope.clientCapabilities : undefined);
  if (!check.ok) {
    if (check.reason === 'missing_capability') throw missingCapabilityError(check.requiredCapabilities);
    throw new TypeError(`inputRequired(): ${check.message}`);
  }
  return out;
}

/** A handler's input-required result, checked; anything wrong with it is a server bug (or -32021). */
export function checkedInputRequired(v: InputRequiredResult, scope: RoundScope): InputRequiredResult {
  const { method } = scope;
  if (!scope.inputRequired) {
    throw new Error(
      `${method}: the handler returned an input-required result, which only tools/call, prompts/get and resources/read may`,
    );
  }
  const check = checkInputRequired(v, scope.era === 'modern' ? scope.clientCapabilities : undefined);
  if (!check.ok) {
    if (check.reason === 'missing_capability') throw missingCapabilityError(check.requiredCapabilities);
    throw new Error(`${method}: the handler returned a malformed input-required result: ${check.message}`);
  }
  return v;
}

/**
 * The state a legacy round hands back to the handler: it never leaves the process, so it is passed on directly,
 * after checking it was made by `ctx.inputRequired()` for this request.
 */
export function handedBackState(
  codec: StateCodec,
  scope: RoundScope,
  original: JsonObject,
  asked: InputRequiredResult,
): unknown {
  if (asked.requestState === undefined) return undefined;
  const v = codec.verify(asked.requestState, bindingOf(scope, original));
  if (!v.ok) {
    throw new Error(`${scope.method}: the handler returned a requestState not made by ctx.inputRequired()`);
  }
  return v.state;
}

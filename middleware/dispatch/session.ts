/**
 * Legacy (2025-11-25) sessions in the dispatcher, with no storage: the built-in `initialize` mints a signed
 * `Mcp-Session-Id` carrying the negotiated version and the client capabilities that allow server-to-client
 * requests (lib/session.ts signs and verifies); a legacy message carrying one is verified before it is routed and
 * read with the capabilities it holds; one that fails verification, has expired or was minted for another
 * principal is refused 404 (the transport's "start a new session"). A legacy request without a session is read as
 * having declared no optional capability, so no server-to-client request goes to a client that did not negotiate
 * it: the handler's input request fails with an error it can catch, and a tool that does not catch it answers a
 * tool error that names what the client lacks.
 *
 * @see docs/middleware/dispatch.md#legacy-sessions
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, McpError, type RefusalReason, refusal } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { INPUT_REQUEST_CAPABILITY } from '../../lib/mrtr.js';
import type { McpRequest } from '../../lib/request.js';
import { type SessionVerifyReason, signSession, verifySession } from '../../lib/session.js';
import { isJsonObject } from '../../lib/json.js';
import { principalKey } from '../../lib/principal.js';
import { classifyOnce } from '../../core/parse-step.js';
import { localsOf, sendRefusal } from '../../core/respond.js';
import type { DispatchConfig } from './options.js';
import { DISPATCH } from './options.js';

/** The header a legacy session travels in. */
export const SESSION_HEADER = 'Mcp-Session-Id';

/** Mints and verifies the session ids of one dispatcher (its `requestState` keys: the first signs, all verify). */
export interface SessionCodec {
  /** A session id for `principal` (principalKey()), valid for the configured time. */
  mint(version: string, capabilities: unknown, principal: string): string;
  /**
   * Before a message is routed: a legacy message (not `initialize`) carrying a session id is verified. Returns
   * false when it was refused (404, answered here); the session's capabilities are then read by
   * {@link sessionCapabilitiesOf}.
   */
  admit(req: IncomingMessage, res: ServerResponse, mcp: McpRequest): boolean;
  /**
   * A GET (the session's stream): its session verified as a message's is. Returns false when it was refused
   * (404, answered here), undefined when it carries none; the session is then read by {@link verifiedSessionOf}.
   */
  admitStream(req: IncomingMessage, res: ServerResponse): boolean | undefined;
}

/** A verified session: its id as received and its expiry (ms since the epoch). */
export interface VerifiedSession {
  readonly id: string;
  readonly expiresAt: number;
}

/** What a verified session holds, per request. */
const SESSIONS = new WeakMap<IncomingMessage, JsonObject>();
/** The id and expiry of a request's verified session. */
const VERIFIED = new WeakMap<IncomingMessage, VerifiedSession>();

const REASONS: Readonly<Record<SessionVerifyReason, RefusalReason>> = {
  malformed: 'session_invalid',
  too_large: 'session_invalid',
  bad_signature: 'session_invalid',
  expired: 'session_expired',
  foreign: 'session_foreign',
};

export function createSessionCodec(config: DispatchConfig): SessionCodec {
  const keys = config.stateKeys;
  const ttlMs = config.sessionTtlMs;
  return {
    mint: (version, capabilities, principal) =>
      signSession(
        {
          version,
          capabilities: isJsonObject(capabilities) ? capabilities : {},
          expiresAt: Date.now() + ttlMs,
        },
        principal,
        keys[0]!,
      ),
    admit(req, res, mcp) {
      const token = req.headers['mcp-session-id'];
      if (token === undefined) return true;
      const revision = classifyOnce(req, mcp, config);
      // Modern requests ignore the header; an unclassifiable one is refused by the router.
      if (!revision.ok || revision.era !== 'legacy') return true;
      if (mcp.kind === 'request' && mcp.method === 'initialize') return true;
      return check(req, res, token, {});
    },
    admitStream(req, res) {
      const token = req.headers['mcp-session-id'];
      if (token === undefined) return undefined;
      // A GET carries no message: its refusal has no id.
      return check(req, res, token, { id: undefined });
    },
  };

  function check(
    req: IncomingMessage,
    res: ServerResponse,
    token: string | string[],
    opts: { id?: undefined },
  ) {
    const v = verifySession(token, principalKey(localsOf(req).principal), keys, Date.now());
    if (v.ok) {
      SESSIONS.set(req, v.capabilities);
      VERIFIED.set(req, { id: token as string, expiresAt: v.expiresAt });
      return true;
    }
    const reason = REASONS[v.reason];
    // An unreadable id is not echoed; a readable one is (the request was well formed, its session is not).
    sendRefusal(req, res, refusal(reason, { era: 'legacy' }), DISPATCH, { ...opts, detail: v.reason });
    return false;
  }
}

/** The verified session of a legacy request (or GET), if it carried one. */
export function verifiedSessionOf(req: IncomingMessage): VerifiedSession | undefined {
  return VERIFIED.get(req);
}

/**
 * The client capabilities a legacy request is read with: those of its verified session, or none (a legacy
 * request without a session declared no optional capability).
 */
export function sessionCapabilitiesOf(req: IncomingMessage): JsonObject {
  return SESSIONS.get(req) ?? {};
}

/** The client capabilities among those `methods` need that `declared` lacks, or undefined. */
export function lackingCapabilities(
  methods: readonly unknown[],
  declared: JsonObject,
): Record<string, JsonObject> | undefined {
  let out: Record<string, JsonObject> | undefined;
  for (const m of methods) {
    if (typeof m !== 'string' || !Object.hasOwn(INPUT_REQUEST_CAPABILITY, m)) continue;
    const cap = INPUT_REQUEST_CAPABILITY[m]!;
    if (!isJsonObject(declared[cap])) (out ??= {})[cap] = {};
  }
  return out;
}

/** The methods of an `inputRequests` object (whatever its shape: malformed ones are refused elsewhere). */
export function inputMethods(inputRequests: unknown): unknown[] {
  if (!isJsonObject(inputRequests)) return [];
  return Object.values(inputRequests).map((r) => (isJsonObject(r) ? r.method : undefined));
}

/**
 * The error a legacy input request for a capability the client did not declare fails with: catchable by the
 * handler, answered in-band (HTTP 200: a legacy client reads another status as a failed transport), and for a
 * tool turned into a tool error by {@link lackingCapabilityResult}.
 */
export function lackingCapabilityError(missing: Record<string, JsonObject>): McpError {
  const names = Object.keys(missing);
  const what = names.length > 1 ? `capabilities ${names.join(', ')}` : `${names[0]} capability`;
  const err = new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `The client did not declare the ${what}`,
    { requiredCapabilities: missing },
    200,
  );
  LACKING.add(err);
  return err;
}

/** The errors {@link lackingCapabilityError} made (a handler's own -32021 is answered as it is). */
const LACKING = new WeakSet<object>();

/**
 * A legacy `tools/call` that failed for a capability its client lacks answers a tool error saying so (a legacy
 * client has no code for it); undefined for anything else.
 */
export function lackingCapabilityResult(
  call: { era: string; method: string },
  err: unknown,
): JsonObject | undefined {
  if (call.era !== 'legacy' || call.method !== 'tools/call') return undefined;
  if (!(err instanceof McpError) || !LACKING.has(err)) return undefined;
  return { content: [{ type: 'text', text: err.message }], isError: true };
}

/**
 * The official SDK's web-standard faces, typed by their shape only (mcpware has no runtime dependency on the
 * SDK), and the one call `sdk()` makes through whichever face it was given. A face that writes to a node
 * response itself (the v1 node `StreamableHTTPServerTransport`, a `toNodeHandler()` result, an Express
 * middleware) is refused at construction: its answer would leave without passing mcpware's transforms.
 */
import { OPTION_ERRORS, badOption, missingOption, optionError } from '../../core/options.js';

/**
 * What mcpware hands the SDK about the caller, in the shape of the SDK's `AuthInfo`: `token` is always empty
 * (the caller's credential is not handed on), `clientId` is the principal's `userId`, `scopes` its roles,
 * `expiresAt` a verified token's `exp`, and `extra.principal` the whole principal.
 */
export interface SdkAuthInfo {
  token: string;
  clientId: string;
  scopes: string[];
  expiresAt?: number;
  extra?: Record<string, unknown>;
}

/** The second argument of every face: the body mcpware already read and parsed, and the caller. */
export interface SdkRequestExtra {
  /** The JSON-RPC message, parsed: the SDK does not read the body again. */
  parsedBody?: unknown;
  /** Absent when no authentication middleware ran before `sdk()`. */
  authInfo?: SdkAuthInfo;
}

/** SDK v2: what `createMcpHandler()` returns (`{ fetch, close, notify, bus }`). */
export interface SdkFetchHandler {
  fetch(request: Request, options?: SdkRequestExtra): Promise<Response>;
}

/** SDK v1 (or v2): a `WebStandardStreamableHTTPServerTransport` with a session id generator. */
export interface SdkWebTransport {
  handleRequest(request: Request, options?: SdkRequestExtra): Promise<Response>;
}

/** A function of your own, e.g. one that routes by `Mcp-Session-Id` to a transport per session. */
export type SdkHandlerFunction = (request: Request, extra: SdkRequestExtra) => Promise<Response>;

/** What `sdk()` takes as its `handler`. */
export type SdkHandler = SdkFetchHandler | SdkWebTransport | SdkHandlerFunction;

/** The one call sdk() makes, whichever face it was given. */
export type SdkCall = (request: Request, extra: SdkRequestExtra) => Promise<Response>;

const FACTORY = 'sdk';

const INSTEAD =
  'pass the createMcpHandler() result (SDK v2), a WebStandardStreamableHTTPServerTransport (SDK v1, with ' +
  'sessions), or a function (request: Request, extra) => Promise<Response>';

function refuse(what: string): TypeError {
  return optionError(OPTION_ERRORS.invalid, FACTORY, `${FACTORY}: option "handler" is ${what}; ${INSTEAD}`);
}

/** A transport object's method, read without invoking getters of a class the SDK may change. */
function methodOf(target: object, name: string): ((...args: never[]) => unknown) | undefined {
  const value: unknown = (target as Record<string, unknown>)[name];
  return typeof value === 'function' ? (value as (...args: never[]) => unknown) : undefined;
}

/**
 * The call through `handler`; a TypeError saying what to pass instead for anything that is not one of the
 * three faces.
 */
export function callOf(handler: unknown): SdkCall {
  if (handler === undefined) {
    throw missingOption(FACTORY, 'handler', INSTEAD);
  }
  if (typeof handler === 'function') {
    // (req, res, next): a node or Express handler writes the answer itself, past mcpware's transforms.
    if (handler.length >= 3) throw refuse('a node (req, res, next) handler');
    const fn = handler as SdkHandlerFunction;
    return async (request, extra) => fn(request, extra);
  }
  if (handler === null || typeof handler !== 'object') {
    throw badOption(FACTORY, 'handler', handler, `an SDK handler (${INSTEAD})`);
  }
  const fetch = methodOf(handler, 'fetch');
  if (fetch !== undefined) {
    const face = handler as SdkFetchHandler;
    return async (request, extra) => face.fetch(request, extra);
  }
  const handleRequest = methodOf(handler, 'handleRequest');
  if (handleRequest !== undefined) {
    // The node transport wraps a web-standard one and takes (req, res, parsedBody).
    if (handleRequest.length >= 3 || '_webStandardTransport' in handler) {
      throw refuse(
        'a node StreamableHTTPServerTransport, which writes to the node response itself; use ' +
          'WebStandardStreamableHTTPServerTransport from the same SDK instead',
      );
    }
    // A stateless web-standard transport serves one request, then throws on every other.
    if ('sessionIdGenerator' in handler && handler.sessionIdGenerator === undefined) {
      throw refuse(
        'a stateless WebStandardStreamableHTTPServerTransport, which serves a single request; for stateless ' +
          'serving pass a function that connects a new server to a new transport per request',
      );
    }
    const face = handler as SdkWebTransport;
    return async (request, extra) => face.handleRequest(request, extra);
  }
  if (methodOf(handler, 'connect') !== undefined) {
    throw refuse(
      'a server: connect it to a WebStandardStreamableHTTPServerTransport, or use createMcpHandler()',
    );
  }
  throw badOption(FACTORY, 'handler', handler, `an SDK handler (${INSTEAD})`);
}

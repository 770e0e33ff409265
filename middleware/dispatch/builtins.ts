/**
 * The built-in methods, answered when no handler of that name is registered: legacy `initialize` and `ping`,
 * `server/discover` in both eras, `logging/setLevel` (validated only), an empty `resources/templates/list`, and
 * the legacy `resources/subscribe` / `unsubscribe` acknowledgements.
 *
 * @see docs/middleware/dispatch.md
 */
import type { IncomingMessage } from 'node:http';
import { ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { LOG_LEVELS, META, isLogLevel } from '../../lib/meta.js';
import { negotiateVersion } from '../../lib/revisions.js';
import type { HandlerMethod } from '../../core/contract.js';
import { principalKey } from '../../lib/principal.js';
import { HandlerContext } from './handler-context.js';
import { discoverCapabilities } from './capabilities.js';
import type { DispatchConfig } from './options.js';
import type { Bound } from './route-table.js';
import type { LegacyStreams } from './legacy-stream.js';
import { SESSION_HEADER, type SessionCodec } from './session.js';

export interface Builtins {
  get(namespace: string, member: string): Bound | undefined;
}

export function createBuiltins(
  config: DispatchConfig,
  sessions?: SessionCodec,
  streams?: Pick<LegacyStreams, 'subscribe' | 'unsubscribe'>,
): Builtins {
  const { capabilities, serverInfo, instructions, legacyVersions, supportedVersions } = config;
  const initialize: HandlerMethod = (params, ctx) => {
    const protocolVersion = negotiateVersion(params.protocolVersion, legacyVersions);
    // The session: what the client negotiated, signed, in the answer's Mcp-Session-Id.
    const res = sessions && HandlerContext.responseOf(ctx);
    if (res && !res.headersSent) {
      res.setHeader(
        SESSION_HEADER,
        sessions!.mint(protocolVersion, params.capabilities, principalKey(ctx.principal)),
      );
    }
    const out: JsonObject = {
      protocolVersion,
      capabilities: structuredClone(capabilities),
      serverInfo: structuredClone(serverInfo),
    };
    if (instructions !== undefined) out.instructions = instructions;
    return out;
  };
  const discover: HandlerMethod = () => {
    const out: JsonObject = {
      supportedVersions: [...supportedVersions],
      capabilities: discoverCapabilities(capabilities, config.tasks !== undefined),
    };
    if (instructions !== undefined) out.instructions = instructions;
    out._meta = { [META.serverInfo]: structuredClone(serverInfo) };
    return out;
  };
  // Keyed by (namespace, member) like the route table, so `server.discover` (no slash: the root method
  // "server.discover") can never reach server/discover.
  const table = new Map<string, Map<string, HandlerMethod>>([
    [
      '',
      new Map([
        ['initialize', initialize],
        ['ping', () => ({})],
      ]),
    ],
    ['server', new Map([['discover', discover]])],
    ['logging', new Map([['setLevel', setLevel]])],
    [
      'resources',
      new Map([
        ['templatesList', emptyTemplates],
        ['subscribe', subscribeAck(streams && ((req, uri) => streams.subscribe(req, uri)))],
        ['unsubscribe', subscribeAck(streams && ((req, uri) => streams.unsubscribe(req, uri)))],
      ]),
    ],
  ]);
  return {
    get(ns, member) {
      const fn = table.get(ns)?.get(member);
      return fn && { fn, self: undefined };
    },
  };
}

/**
 * Stateless: the level of a legacy session cannot be kept between requests; the call is accepted and validated
 * only (legacy requests get the `legacyLogLevel` option's level). Modern clients send the level per request in
 * _meta.
 */
const setLevel: HandlerMethod = (params) => {
  if (!isLogLevel(params.level)) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid params: "level" must be one of ${LOG_LEVELS.join(', ')}`,
    );
  }
  return {};
};

/** `resources` promises resources/templates/list; with no templates handler the list is empty. */
const emptyTemplates: HandlerMethod = (params) => {
  if (typeof params.cursor === 'string' && params.cursor !== '') {
    throw new McpError(ErrorCode.InvalidParams, 'resources/templates/list: Invalid cursor: it is malformed');
  }
  return { resourceTemplates: [] };
};

/**
 * 2025-11-25 resources/subscribe and unsubscribe (legacy only; gated by resources.subscribe): the request is
 * validated, recorded for its session (whose GET stream delivers notifications/resources/updated, see
 * legacy-stream.ts) and acknowledged. Modern clients subscribe with subscriptions/listen
 * (resourceSubscriptions).
 */
function subscribeAck(record?: (req: IncomingMessage, uri: string) => void): HandlerMethod {
  return (params, ctx) => {
    if (typeof params.uri !== 'string' || params.uri === '') {
      throw new McpError(ErrorCode.InvalidParams, 'Invalid params: "uri" must be a non-empty string');
    }
    if (record !== undefined && ctx.req !== undefined) record(ctx.req, params.uri);
    return {};
  };
}

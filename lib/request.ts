/**
 * The parsed MCP request as middlewares share it (`req.locals.mcp`): one parse per request, the fields every
 * later step needs, and the mirrored header values exactly as received.
 */
import type { Era, RequestId } from './errors.js';
import type { JsonObject, Message, MessageKind } from './jsonrpc.js';
import { META } from './meta.js';
import { METHOD_TARGETS } from './routing.js';
import type { StandardHeaders } from './headers.js';
import { isJsonObject } from './json.js';

export interface McpRequest {
  kind: MessageKind;
  /** The request id (requests and responses); absent for notifications. `0` is a valid id. */
  id?: RequestId;
  /** The JSON-RPC method (requests and notifications). */
  method?: string;
  /** `params` when it is an object. */
  params?: JsonObject;
  /** `params._meta` when it is an object. */
  meta?: JsonObject;
  /** What the method targets: `params.name` (tools/call, prompts/get) or `params.uri` (resources/*). */
  target?: string;
  /** `params.arguments` when it is an object (tools/call, prompts/get). */
  arguments?: JsonObject;
  /** `_meta["io.modelcontextprotocol/protocolVersion"]` when it is a non-empty string: the modern signal. */
  metaVersion?: string;
  /** The mirrored headers as received (`Mcp-Name` still sentinel-encoded). */
  headers: StandardHeaders;
  /** Body size in bytes. */
  bytes: number;
  /**
   * The classified message: its `kind` with the members of that kind (`id`, `method` and `params`; `result`;
   * `error`) and `raw`, the JSON object as received. To hand the body to another JSON-RPC server (an official
   * SDK transport's `handleRequest(req, res, body)`), pass `message.raw`, not `message`.
   */
  message: Message;
  /** Set by revision classification. */
  era?: Era;
  /** The revision the request speaks, set by revision classification. */
  version?: string | undefined;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Build the shared view of a parsed message. `headers` are Node's lower-cased request headers. */
export function toMcpRequest(
  message: Message,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  bytes: number,
): McpRequest {
  const out: McpRequest = {
    kind: message.kind,
    headers: {
      protocolVersion: headerValue(headers['mcp-protocol-version']),
      method: headerValue(headers['mcp-method']),
      name: headerValue(headers['mcp-name']),
    },
    bytes,
    message,
  };
  if (message.kind === 'request' || message.kind === 'response') out.id = message.id;
  else if (message.kind === 'error' && message.id !== undefined) out.id = message.id;
  if (message.kind === 'request' || message.kind === 'notification') {
    out.method = message.method;
    const params = message.params;
    if (params) {
      out.params = params;
      if (isJsonObject(params._meta)) {
        out.meta = params._meta;
        const pv = params._meta[META.protocolVersion];
        if (typeof pv === 'string') out.metaVersion = pv;
      }
      const member = METHOD_TARGETS.get(message.method)?.member;
      if (member && typeof params[member] === 'string') out.target = params[member] as string;
      if (
        (message.method === 'tools/call' || message.method === 'prompts/get') &&
        isJsonObject(params.arguments)
      ) {
        out.arguments = params.arguments;
      }
    }
  }
  return out;
}

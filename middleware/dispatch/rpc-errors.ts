/**
 * Error answers: what a handler threw (or a routing decision) as the JSON-RPC error it is sent as, and the one
 * writer of error answers. An McpError keeps its code (mapped to one the era allows), data and status; anything
 * else is -32603 "Internal error", its detail for the log only.
 *
 * @see docs/middleware/dispatch.md
 */
import { type Era, ErrorCode, McpError } from '../../lib/errors.js';
import type { JsonObject } from '../../lib/jsonrpc.js';
import { sendableCode, statusForCode } from '../../lib/encode.js';
import { errorMeta, log } from '../../core/log.js';
import type { Logger } from '../../core/types.js';
import type { Reply } from './reply.js';
import { clip } from '../../lib/clip.js';
import { METHOD_TARGETS } from '../../lib/routing.js';

/** A JSON-RPC error and the HTTP status it travels with. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
  status: number;
  /** Set when the thrown value is not sent as it is (a generic -32603 goes out): why, for the log. */
  hidden?: 'unexpected' | 'forbidden_code';
}

const INTERNAL: Omit<RpcError, 'hidden'> = {
  code: ErrorCode.InternalError,
  message: 'Internal error',
  status: 200,
};

function isMcpErrorLike(e: unknown): e is McpError {
  // instanceof fails across two copies of the package (CJS and ESM builds side by side): check the shape too.
  return (
    e instanceof McpError ||
    (e instanceof Error && e.name === 'McpError' && Number.isInteger((e as { code?: unknown }).code))
  );
}

/** The error answer for whatever a handler threw, in an era. */
export function toRpcError(thrown: unknown, era: Era): RpcError {
  if (!isMcpErrorLike(thrown)) return { ...INTERNAL, hidden: 'unexpected' };
  const code = sendableCode(thrown.code, era);
  if (code === ErrorCode.InternalError && thrown.code !== ErrorCode.InternalError) {
    return { ...INTERNAL, hidden: 'forbidden_code' };
  }
  const s = thrown.status;
  let status =
    typeof s === 'number' && Number.isInteger(s) && s >= 200 && s <= 599 ? s : statusForCode(code, era);
  // A legacy 404 means "session gone" to a 2025-11-25 client: never send one for a handler error.
  if (era === 'legacy' && status === 404) status = 200;
  const message = typeof thrown.message === 'string' && thrown.message !== '' ? thrown.message : 'Error';
  const out: RpcError = { code, message, status };
  if (thrown.data !== undefined) out.data = thrown.data;
  return out;
}

/** -32601 for `method`, with the reason when there is one (404 modern, 200 legacy). */
export function methodNotFound(method: string, era: Era, reason?: string): RpcError {
  const data: JsonObject = { method: clip(method, 128) };
  if (reason !== undefined) data.reason = reason;
  return {
    code: ErrorCode.MethodNotFound,
    message: 'Method not found',
    data,
    status: statusForCode(ErrorCode.MethodNotFound, era),
  };
}

/** An internal error answer (the cause has been logged). */
export function internalError(): RpcError {
  return { ...INTERNAL };
}

/** -32021 for the capabilities a request needs but did not declare. */
export function missingCapabilityError(required: Record<string, JsonObject>): McpError {
  const names = Object.keys(required);
  return new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `This request needs the client ${names.length > 1 ? 'capabilities' : 'capability'} ${names.join(', ')}, which it did not declare`,
    { requiredCapabilities: required },
    400,
  );
}

/** Write an error answer; error data that cannot be serialized is logged and sent as a generic -32603. */
export function sendRpcError(reply: Reply, e: RpcError, logger: Logger): void | Promise<void> {
  const error: { code: number; message: string; data?: unknown } = { code: e.code, message: e.message };
  if (e.data !== undefined) error.data = e.data;
  let text: string;
  let { code, status } = e;
  try {
    text = JSON.stringify({ jsonrpc: '2.0', id: reply.mcp.id, error });
  } catch (err) {
    log(logger, 'error', `dispatch: error data of ${clip(reply.mcp.method ?? '', 128)} is not serializable`, {
      error: errorMeta(err),
    });
    ({ code, status } = INTERNAL);
    text = JSON.stringify({ jsonrpc: '2.0', id: reply.mcp.id, error: { code, message: INTERNAL.message } });
  }
  return reply.send(status, text, { code });
}

/** The log metadata naming a failed handler: the method, and the tool, prompt or URI the request named. */
function failureMeta(reply: Reply): { where: string; meta: Record<string, string> } {
  const method = clip(reply.mcp.method ?? '', 128);
  const meta: Record<string, string> = { method };
  const target = METHOD_TARGETS.get(reply.mcp.method ?? '');
  const named = target === undefined ? undefined : reply.mcp.params?.[target.member];
  if (target === undefined || typeof named !== 'string') return { where: method, meta };
  // Logged under the kind of thing named (`tool`, `prompt`); a resource under its `uri`.
  const key = target.member === 'uri' ? 'uri' : target.kind;
  meta[key] = clip(named, 128);
  return { where: `${method} (${key} ${JSON.stringify(meta[key])})`, meta };
}

/** Answer what a handler threw, logging what the client is not shown. */
export function sendThrown(reply: Reply, thrown: unknown, logger: Logger): void | Promise<void> {
  const e = toRpcError(thrown, reply.era);
  if (e.hidden !== undefined) {
    const { where, meta } = failureMeta(reply);
    const message =
      e.hidden === 'forbidden_code'
        ? `dispatch: handler for ${where} threw code ${(thrown as McpError).code}, which this revision forbids; sent -32603`
        : `dispatch: handler for ${where} failed`;
    log(logger, 'error', message, { ...meta, error: errorMeta(thrown) });
  }
  return sendRpcError(reply, e, logger);
}

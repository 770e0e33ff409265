/**
 * The benchmark's workloads: the exact requests every server is sent, and the check every answer must pass.
 *
 * Every server gets the same bytes (the `Authorization` header included: servers without authentication
 * ignore it). Legacy requests are stateless 2025-11-25 requests (no `initialize` first: every server under
 * test is stateless); modern ones carry the 2026-07-28 `_meta` envelope and the standard headers.
 */

export type Era = 'legacy' | 'modern';
export type Method = 'tools/list' | 'tools/call';

/** The API key every request carries (`Authorization: Bearer …`); the full stack knows only its hash. */
export const BENCH_KEY = 'mcpware-bench-key-0123456789abcdef';
export const ECHO_TEXT = 'hello from the bench';
export const TOOL_NAME = 'echo';
export const TOOL_DESCRIPTION = 'Echo the text back';
/** The echo tool's input schema (JSON Schema; the SDK servers declare the same with zod). */
export const ECHO_INPUT_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
} as const;

export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';
export const SERVER_INFO = { name: 'bench-server', version: '1.0.0' };

export interface Workload {
  /** `legacy-list`, `modern-call`, … */
  id: string;
  era: Era;
  method: Method;
  body: string;
  headers: Record<string, string>;
  /** Cheap per-answer check (runs in the load generator for every response). */
  verify(body: string): boolean;
  /** Thorough check of one answer (probe phase): returns a problem, or undefined. */
  inspect(parsed: unknown): string | undefined;
}

const META_PV = 'io.modelcontextprotocol/protocolVersion';
const META_CC = 'io.modelcontextprotocol/clientCapabilities';
const META_CI = 'io.modelcontextprotocol/clientInfo';

function envelope(): Record<string, unknown> {
  return { [META_PV]: MODERN_VERSION, [META_CC]: {}, [META_CI]: { name: 'bench-client', version: '1.0.0' } };
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The per-response check: a JSON-RPC result (never an error, never a tool error) carrying the expected
 * payload. Substring tests, not JSON.parse: the check runs in the load generator for every answer and must
 * not slow it down differently per server. A JSON-RPC error answered with HTTP 200 fails it (`"error":`).
 */
function verifier(marker: string): (body: string) => boolean {
  return (body) =>
    body.includes('"result":') &&
    body.includes(marker) &&
    !body.includes('"error":') &&
    !body.includes('"isError":true');
}

function inspector(method: Method, id: number): (parsed: unknown) => string | undefined {
  return (v) => {
    if (!isObj(v)) return 'not a JSON object';
    if (v.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
    if (v.id !== id) return `id ${JSON.stringify(v.id)} instead of ${id}`;
    if ('error' in v) return `JSON-RPC error ${JSON.stringify(v.error)}`;
    const r = v.result;
    if (!isObj(r)) return 'no result object';
    if (method === 'tools/list') {
      const tools = r.tools;
      if (!Array.isArray(tools) || tools.length !== 1) return 'tools/list must list exactly one tool';
      const t = tools[0] as Record<string, unknown>;
      if (t.name !== TOOL_NAME) return `tool named ${JSON.stringify(t.name)}`;
      if (t.description !== TOOL_DESCRIPTION) return 'tool description differs';
      const schema = t.inputSchema;
      if (!isObj(schema) || schema.type !== 'object' || !isObj(schema.properties)) return 'bad inputSchema';
      if (!isObj(schema.properties.text) || schema.properties.text.type !== 'string')
        return 'inputSchema lacks properties.text of type string';
      return undefined;
    }
    if (r.isError === true) return 'tool error result';
    const content = r.content;
    if (!Array.isArray(content) || content.length !== 1) return 'content must hold exactly one block';
    const b = content[0] as Record<string, unknown>;
    if (b.type !== 'text' || b.text !== ECHO_TEXT) return `content block ${JSON.stringify(b)}`;
    return undefined;
  };
}

function make(era: Era, method: Method): Workload {
  const id = method === 'tools/list' ? 1 : 2;
  const params: Record<string, unknown> =
    method === 'tools/call' ? { name: TOOL_NAME, arguments: { text: ECHO_TEXT } } : {};
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${BENCH_KEY}`,
  };
  if (era === 'modern') {
    params._meta = envelope();
    headers['mcp-protocol-version'] = MODERN_VERSION;
    headers['mcp-method'] = method;
    if (method === 'tools/call') headers['mcp-name'] = TOOL_NAME;
  } else {
    headers['mcp-protocol-version'] = LEGACY_VERSION;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
  const marker = method === 'tools/list' ? `"name":"${TOOL_NAME}"` : `"text":"${ECHO_TEXT}"`;
  return {
    id: `${era}-${method === 'tools/list' ? 'list' : 'call'}`,
    era,
    method,
    body,
    headers,
    verify: verifier(marker),
    inspect: inspector(method, id),
  };
}

export const WORKLOADS: readonly Workload[] = Object.freeze([
  make('legacy', 'tools/list'),
  make('legacy', 'tools/call'),
  make('modern', 'tools/list'),
  make('modern', 'tools/call'),
]);

export function workloadById(id: string): Workload {
  const w = WORKLOADS.find((x) => x.id === id);
  if (!w) throw new Error(`unknown workload ${id}`);
  return w;
}

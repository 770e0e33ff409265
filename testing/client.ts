/**
 * `McpTestClient`: a small MCP client over supertest (loaded on the first request) that builds correct requests of either era, with options
 * to break exactly one thing on purpose.
 *
 * - Modern (2026-07-28): every request carries the `_meta` envelope (protocolVersion, clientCapabilities,
 *   clientInfo) and the headers `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (tools/call, prompts/get,
 *   resources/read; Base64 sentinel when needed) and the `Mcp-Param-*` headers the tool's `x-mcp-header`
 *   annotations ask for: learned from the `tools/list` answers this client has received, or given per call.
 *   The client sends only the requests the test asks for; `autoParamHeaders: true` lets it fetch tools/list
 *   once on its own before the first tools/call.
 * - Legacy (2025-11-25): `initialize` + `notifications/initialized` before the first call (once, unless
 *   `autoInitialize: false`), then plain requests with `MCP-Protocol-Version`.
 *
 * Every method returns supertest's response (`status`, `headers`, `body`), whatever the status.
 * Servers are bound to 127.0.0.1 (an app or a server that is not listening yet is started there). A server the
 * client starts never keeps the process alive (its handle and connections are unref'd), so a test that fails
 * before `close()` does not leave the test runner waiting.
 *
 * @see docs/guides/testing.md
 */
import http, {
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type request from 'supertest';
import type { Era, RequestId } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { META } from '../lib/meta.js';
import { LATEST_LEGACY_VERSION, LATEST_MODERN_VERSION } from '../lib/revisions.js';
import { NAME_MEMBER } from '../lib/headers.js';
import { encodeHeaderValue } from '../lib/sentinel.js';
import { type ParamHeader, paramHeaderValues, paramHeaders } from '../lib/xmcpheader.js';
import { boolOption, knownKeys, oneOf, optionsObject, stringOption } from '../core/options.js';
import { isJsonObject } from '../lib/json.js';

/** The era a request is sent in: the same type as the library's. */
export type { Era };

type Supertest = typeof request;
let supertest: Supertest | undefined;

const MISSING =
  'McpTestClient sends its requests with supertest, which is not installed: npm install --save-dev supertest';

/**
 * supertest, loaded when the first request is sent: it is an optional peer, so that `mcpware/testing` (and
 * `TestIssuer`) load without it. The CommonJS build requires it (a dynamic import() would fail under test
 * runners that run CommonJS in a VM, as Jest does); the ES module build imports it.
 */
async function loadSupertest(): Promise<Supertest> {
  if (supertest) return supertest;
  try {
    if (typeof require === 'function') {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS build: see above
      supertest = require('supertest') as Supertest;
    } else {
      const m = (await import('supertest')) as { default?: Supertest };
      supertest = m.default ?? (m as unknown as Supertest);
    }
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND')
      throw new Error(MISSING, { cause: err });
    throw err;
  }
  return supertest;
}

/**
 * supertest's response. For a `text/event-stream` answer, `body` is the final JSON-RPC response of the stream
 * and `events` the notifications sent before it, in order.
 */
export type McpResponse = request.Response & { events?: JsonObject[] };

/**
 * Parse an SSE body into its JSON messages (one per event; multi-line `data:` joined with newlines). Comment
 * lines and other fields are ignored.
 * @see docs/testing.md
 * @example
 * ```ts
 * import { parseSse } from 'mcpware/testing';
 *
 * const [message] = parseSse('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n');
 * console.log(message?.result);
 * ```
 */
export function parseSse(text: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
    if (data.length === 0) continue;
    const v: unknown = JSON.parse(data.join('\n'));
    if (isJsonObject(v)) out.push(v);
  }
  return out;
}

export interface McpTestClientOptions {
  /** The MCP endpoint path. Default `/mcp`. */
  path?: string;
  /** Which era to speak. Default `modern`. */
  era?: Era;
  /** The revision to speak. Default `2026-07-28` (modern) or `2025-11-25` (legacy). */
  version?: string;
  /** Headers sent on every request (e.g. `Authorization`). Applied after the protocol headers. */
  headers?: Readonly<Record<string, string>>;
  /** Client capabilities (modern `_meta`, legacy `initialize`). Default `{}`. */
  clientCapabilities?: JsonObject;
  /** Client info. Default `{name: "mcpware-test", version: "0"}`; `null` leaves it out. */
  clientInfo?: { name: string; version: string; [k: string]: unknown } | null;
  /** Legacy: send `initialize` before the first other request. Default true. */
  autoInitialize?: boolean;
  /**
   * Modern: before the first tools/call, fetch tools/list on its own (an extra request) to learn the
   * `Mcp-Param-*` headers. Default false: they come from the tools/list answers this client received, or from
   * the call's `inputSchema` / `paramHeaders`.
   */
  autoParamHeaders?: boolean;
}

/** Per-call options, most of them to break one thing on purpose. */
export interface RequestOptions {
  /** The request id. Default: the next number (from 1). */
  id?: RequestId;
  /** Headers to add or replace (names case-insensitive), applied last. */
  headers?: Readonly<Record<string, string>>;
  /** Headers to leave out (names case-insensitive), e.g. `'Mcp-Name'`. */
  omitHeader?: string | readonly string[];
  /** The revision for both the header and `_meta` of this call. */
  version?: string;
  /** Only the `MCP-Protocol-Version` header (modern: `_meta` keeps the client's version). */
  headerVersion?: string;
  /** Only `_meta["io.modelcontextprotocol/protocolVersion"]`. */
  metaVersion?: string;
  /** Modern: `true` sends no `_meta` at all; a list leaves out those `_meta` keys. */
  omitMeta?: boolean | readonly string[];
  /** Extra `_meta` members (merged over the envelope). */
  meta?: JsonObject;
  /** `Mcp-Param-*` headers to send instead of the derived ones (`{}` sends none). */
  paramHeaders?: Readonly<Record<string, string>>;
  /** The tool's inputSchema to derive `Mcp-Param-*` from (instead of tools/list). */
  inputSchema?: JsonObject;
  /** Legacy: do not initialize first. */
  skipInitialize?: boolean;
}

const FACTORY = 'McpTestClient';

const CLIENT_OPTIONS = [
  'path',
  'era',
  'version',
  'headers',
  'clientCapabilities',
  'clientInfo',
  'autoInitialize',
  'autoParamHeaders',
];

const REQUEST_OPTIONS = [
  'id',
  'headers',
  'omitHeader',
  'version',
  'headerVersion',
  'metaVersion',
  'omitMeta',
  'meta',
  'paramHeaders',
  'inputSchema',
  'skipInitialize',
];

/** Refuse a misspelt per-call option: a typo must not send a request other than the one the test means. */
function checkRequestOptions(method: string, opts: object): void {
  knownKeys(`${FACTORY}.${method}`, optionsObject(`${FACTORY}.${method}`, opts), REQUEST_OPTIONS);
}

const DEFAULT_CLIENT_INFO = Object.freeze({ name: 'mcpware-test', version: '0' });

type Target = Server | RequestListener | string;

/**
 * An MCP client for tests over real HTTP (supertest): it sends what a spec-following client sends in the
 * chosen era (the envelope, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), so a test names only what it
 * means to vary. The target is an app or request listener, an `http.Server`, or a base URL.
 * @param options - {@link McpTestClientOptions} (the constructor's)
 * @see docs/testing.md
 * @example
 * ```ts
 * import express from 'express';
 * import { dispatch, parse } from 'mcpware';
 * import { McpTestClient } from 'mcpware/testing';
 * import { ToolRegistry, ok } from 'mcpware/tools';
 *
 * const tools = new ToolRegistry({ tools: [{ name: 'ping', inputSchema: { type: 'object' }, call: () => ok({}) }] });
 * const serverInfo = { name: 'test-server', version: '0' };
 * const server = express().use('/mcp', parse(), dispatch({ anonymous: true, handlers: { tools }, serverInfo }));
 * const client = new McpTestClient(server);
 * const res = await client.callTool('ping');
 * console.log(res.status, res.body);
 * await client.close();
 * ```
 */
export class McpTestClient {
  readonly era: Era;
  readonly version: string;
  readonly path: string;
  #target: Target;
  #ownServer: Server | undefined;
  #base: Promise<string> | undefined;
  #nextId = 1;
  #initialized = false;
  #schemas: Map<string, readonly ParamHeader[]> | undefined;
  readonly #opts: McpTestClientOptions;

  /**
   * `target`: an Express app or any request listener, an `http.Server` (started on 127.0.0.1 when not
   * listening), or a base URL.
   */
  constructor(target: Target, options?: McpTestClientOptions) {
    const o = optionsObject(FACTORY, options);
    knownKeys(FACTORY, o, CLIENT_OPTIONS);
    boolOption(FACTORY, 'autoInitialize', o.autoInitialize, true);
    boolOption(FACTORY, 'autoParamHeaders', o.autoParamHeaders, false);
    if (o.headers !== undefined) optionsObject(FACTORY, o.headers, 'option "headers"');
    this.#target = target;
    this.#opts = o;
    this.era = oneOf<Era>(FACTORY, 'era', o.era, ['modern', 'legacy'], 'modern');
    const latest = this.era === 'modern' ? LATEST_MODERN_VERSION : LATEST_LEGACY_VERSION;
    this.version = stringOption(FACTORY, 'version', o.version, latest);
    this.path = stringOption(FACTORY, 'path', o.path, '/mcp');
  }

  /** The base URL of the server (starting it on 127.0.0.1 when needed). */
  url(): Promise<string> {
    this.#base ??= this.#start();
    return this.#base;
  }

  async #start(): Promise<string> {
    const t = this.#target;
    if (typeof t === 'string') return t.replace(/\/+$/, '');
    let server: Server;
    if (typeof t === 'function') {
      server = http.createServer(t as (req: IncomingMessage, res: ServerResponse) => void);
      this.#ownServer = server;
    } else server = t;
    if (!server.listening) {
      if (!this.#ownServer) this.#ownServer = server;
      detach(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    }
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    return `http://${host}:${addr.port}`;
  }

  /** Stop the server if this client started it. */
  async close(): Promise<void> {
    const s = this.#ownServer;
    this.#ownServer = undefined;
    this.#base = undefined;
    if (s && s.listening) {
      s.closeAllConnections?.();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  }

  /** Forget the legacy handshake and cached tool schemas. */
  reset(): void {
    this.#initialized = false;
    this.#schemas = undefined;
  }

  /** The modern `_meta` envelope this client sends. */
  envelope(version = this.version): JsonObject {
    const meta: JsonObject = {
      [META.protocolVersion]: version,
      [META.clientCapabilities]: this.#opts.clientCapabilities ?? {},
    };
    const info = this.#opts.clientInfo === undefined ? DEFAULT_CLIENT_INFO : this.#opts.clientInfo;
    if (info !== null) meta[META.clientInfo] = info;
    return meta;
  }

  /** Send a request (an id is assigned). */
  async request(method: string, params: JsonObject = {}, opts: RequestOptions = {}): Promise<McpResponse> {
    checkRequestOptions('request', opts);
    if (this.era === 'legacy' && method !== 'initialize' && !opts.skipInitialize) {
      const refused = await this.#ensureInitialized();
      if (refused) return refused;
    }
    // Learn the tool schemas first, so ids stay in the order the requests are sent.
    if (
      this.era === 'modern' &&
      method === 'tools/call' &&
      !this.#schemas &&
      !opts.paramHeaders &&
      !opts.inputSchema &&
      this.#opts.autoParamHeaders === true
    ) {
      await this.#learnSchemas(opts);
    }
    const id = opts.id ?? this.#nextId++;
    return this.#send(method, params, opts, id);
  }

  /** Send a notification (no id). */
  async notify(method: string, params: JsonObject = {}, opts: RequestOptions = {}): Promise<McpResponse> {
    checkRequestOptions('notify', opts);
    return this.#send(method, params, opts, undefined);
  }

  /** Post a JSON-RPC response (as a client answering a server request would). */
  async respond(
    id: RequestId,
    result: unknown,
    opts: Pick<RequestOptions, 'headers' | 'omitHeader' | 'headerVersion'> = {},
  ): Promise<McpResponse> {
    checkRequestOptions('respond', opts);
    const headers = this.#baseHeaders();
    headers['MCP-Protocol-Version'] = opts.headerVersion ?? this.version;
    return this.post(JSON.stringify({ jsonrpc: '2.0', id, result }), this.#finalHeaders(headers, opts));
  }

  /** Post a raw body with the given headers (nothing added but Content-Type when missing). */
  async post(body: string, headers: Readonly<Record<string, string>> = {}): Promise<McpResponse> {
    const base = await this.url();
    const h: Record<string, string> = { ...headers };
    if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type'))
      h['Content-Type'] = 'application/json';
    const request = await loadSupertest();
    const res: McpResponse = await request(base).post(this.path).set(h).send(body);
    if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      const messages = parseSse(res.text);
      const final = messages.findIndex((m) => 'result' in m || 'error' in m);
      res.events = final < 0 ? messages : messages.slice(0, final);
      res.body = final < 0 ? {} : messages[final];
    }
    return res;
  }

  /** Legacy handshake: `initialize` (no envelope, no version header). Marks the client initialized. */
  async initialize(params: JsonObject = {}, opts: RequestOptions = {}): Promise<McpResponse> {
    checkRequestOptions('initialize', opts);
    const p: JsonObject = {
      protocolVersion: opts.version ?? (this.era === 'legacy' ? this.version : LATEST_LEGACY_VERSION),
      capabilities: this.#opts.clientCapabilities ?? {},
      ...params,
    };
    const info = this.#opts.clientInfo === undefined ? DEFAULT_CLIENT_INFO : this.#opts.clientInfo;
    if (info !== null && p.clientInfo === undefined) p.clientInfo = info;
    const headers = this.#baseHeaders();
    const id = opts.id ?? this.#nextId++;
    const res = await this.post(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: p }),
      this.#finalHeaders(headers, opts),
    );
    if (res.status === 200 && res.body?.result) this.#initialized = true;
    return res;
  }

  /**
   * The legacy handshake before a call, once: the answer to `initialize` when it was refused (the call it was
   * for then answers with it, and the next call tries again), else nothing.
   */
  async #ensureInitialized(): Promise<McpResponse | undefined> {
    if (this.#initialized || this.#opts.autoInitialize === false) return undefined;
    const res = await this.initialize();
    if (!this.#initialized) return res;
    await this.#send('notifications/initialized', {}, {}, undefined);
    return undefined;
  }

  #baseHeaders(): Record<string, string> {
    return { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  }

  #finalHeaders(
    headers: Record<string, string>,
    opts: Pick<RequestOptions, 'headers' | 'omitHeader'>,
  ): Record<string, string> {
    const out: Record<string, string> = {};
    const put = (k: string, v: string): void => {
      for (const existing of Object.keys(out))
        if (existing.toLowerCase() === k.toLowerCase()) delete out[existing];
      out[k] = v;
    };
    for (const [k, v] of Object.entries(headers)) put(k, v);
    for (const [k, v] of Object.entries(this.#opts.headers ?? {})) put(k, v);
    for (const [k, v] of Object.entries(opts.headers ?? {})) put(k, v);
    const omit =
      opts.omitHeader === undefined
        ? []
        : typeof opts.omitHeader === 'string'
          ? [opts.omitHeader]
          : opts.omitHeader;
    for (const o of omit)
      for (const k of Object.keys(out)) if (k.toLowerCase() === o.toLowerCase()) delete out[k];
    return out;
  }

  async #send(
    method: string,
    params: JsonObject,
    opts: RequestOptions,
    id: RequestId | undefined,
  ): Promise<McpResponse> {
    const headers = this.#baseHeaders();
    let p: JsonObject = { ...params };
    if (this.era === 'modern') {
      const metaVersion = opts.metaVersion ?? opts.version ?? this.version;
      if (opts.omitMeta !== true) {
        const meta: JsonObject = {
          ...this.envelope(metaVersion),
          ...(isJsonObject(params._meta) ? params._meta : {}),
          ...opts.meta,
        };
        if (Array.isArray(opts.omitMeta)) for (const k of opts.omitMeta) delete meta[k];
        p = { ...p, _meta: meta };
      }
      headers['MCP-Protocol-Version'] = opts.headerVersion ?? opts.version ?? this.version;
      headers['Mcp-Method'] = method;
      const member = Object.hasOwn(NAME_MEMBER, method) ? NAME_MEMBER[method] : undefined;
      if (member !== undefined && typeof params[member] === 'string')
        headers['Mcp-Name'] = encodeHeaderValue(params[member] as string);
      if (method === 'tools/call' && typeof params.name === 'string') {
        Object.assign(
          headers,
          await this.#paramHeaders(
            params.name,
            isJsonObject(params.arguments) ? params.arguments : undefined,
            opts,
          ),
        );
      }
    } else {
      if (opts.meta)
        p = { ...p, _meta: { ...(isJsonObject(params._meta) ? params._meta : {}), ...opts.meta } };
      headers['MCP-Protocol-Version'] = opts.headerVersion ?? opts.version ?? this.version;
    }
    const msg: JsonObject = { jsonrpc: '2.0' };
    if (id !== undefined) msg.id = id;
    msg.method = method;
    msg.params = p;
    const res = await this.post(JSON.stringify(msg), this.#finalHeaders(headers, opts));
    if (method === 'tools/list') this.#learnFrom(res);
    return res;
  }

  /** Keep each listed tool's x-mcp-header annotations (a tool listed again replaces what was kept). */
  #learnFrom(res: McpResponse): void {
    const result: unknown = res.body?.result;
    if (res.status !== 200 || !isJsonObject(result) || !Array.isArray(result.tools)) return;
    const map = (this.#schemas ??= new Map());
    for (const t of result.tools as unknown[]) {
      if (!isJsonObject(t) || typeof t.name !== 'string') continue;
      const r = paramHeaders(t.inputSchema);
      // Clients MUST drop tools with invalid annotations; here they simply get no Mcp-Param-* headers.
      if (r.ok) map.set(t.name, r.params);
      else map.delete(t.name);
    }
  }

  async #paramHeaders(
    name: string,
    args: JsonObject | undefined,
    opts: RequestOptions,
  ): Promise<Record<string, string>> {
    if (opts.paramHeaders) return { ...opts.paramHeaders };
    let params: readonly ParamHeader[] | undefined;
    if (opts.inputSchema) {
      const r = paramHeaders(opts.inputSchema);
      params = r.ok ? r.params : undefined;
    } else {
      params = this.#schemas?.get(name);
    }
    return params ? paramHeaderValues(params, args, encodeHeaderValue) : {};
  }

  /** Walk tools/list (following cursors, at most 100 pages): the opt-in `autoParamHeaders` fetch. */
  async #learnSchemas(opts: RequestOptions): Promise<void> {
    this.#schemas ??= new Map();
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await this.#send(
        'tools/list',
        cursor === undefined ? {} : { cursor },
        { headers: opts.headers },
        this.#nextId++,
      );
      const result: unknown = res.body?.result;
      if (res.status !== 200 || !isJsonObject(result) || typeof result.nextCursor !== 'string') break;
      cursor = result.nextCursor;
    }
  }

  // Convenience methods ---------------------------------------------------------------------------------------

  discover(opts?: RequestOptions): Promise<McpResponse> {
    return this.request('server/discover', {}, opts);
  }
  /**
   * A request any server answers, for liveness and auth checks: `ping` in the legacy era, `server/discover` in
   * the modern one (2026-07-28 removed ping; a modern `ping` is answered 404 / -32601). To send a modern `ping`
   * on purpose, use `request('ping')`.
   */
  ping(opts?: RequestOptions): Promise<McpResponse> {
    return this.request(this.era === 'modern' ? 'server/discover' : 'ping', {}, opts);
  }
  /** `tools/list`; the answer's `x-mcp-header` annotations are kept for the `Mcp-Param-*` headers of later calls. */
  listTools(params: JsonObject = {}, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('tools/list', params, opts);
  }
  callTool(name: string, args: JsonObject = {}, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('tools/call', { name, arguments: args }, opts);
  }
  listResources(params: JsonObject = {}, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('resources/list', params, opts);
  }
  listResourceTemplates(params: JsonObject = {}, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('resources/templates/list', params, opts);
  }
  readResource(uri: string, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('resources/read', { uri }, opts);
  }
  listPrompts(params: JsonObject = {}, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('prompts/list', params, opts);
  }
  getPrompt(
    name: string,
    args: Readonly<Record<string, string>> = {},
    opts?: RequestOptions,
  ): Promise<McpResponse> {
    return this.request('prompts/get', { name, arguments: { ...args } }, opts);
  }
  complete(params: JsonObject, opts?: RequestOptions): Promise<McpResponse> {
    return this.request('completion/complete', params, opts);
  }
}

/**
 * A server this client starts must not keep the process alive: a test that fails before `close()` would
 * otherwise leave the test runner waiting for its listening handle and its keep-alive connections.
 */
function detach(server: Server): void {
  server.unref();
  server.on('connection', (socket) => socket.unref());
}

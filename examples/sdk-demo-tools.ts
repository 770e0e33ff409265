/**
 * The demo's tools, resources and prompts written with the official SDK v2 (`@modelcontextprotocol/server`
 * `McpServer`), for the demo's two other modes: served in-process behind the stack (`MCP_BACKEND=sdk`,
 * examples/demo.ts) and as a plain upstream server (examples/upstream.ts). Names, schemas, descriptions and
 * answers come from examples/demo-contract.ts, as `demoTools()`'s do; docs/guides/demo-server.md lists where
 * the SDK answers differently.
 *
 * mcpware appears here only as a reader of files: the catalogue is loaded with `loadCatalogue()` and rendered
 * with `renderTemplate()` and `toResourceContents()` (pure functions), so both servers serve the catalogue by the
 * same rules. What mcpware adds (visibility of `admin_report`, redaction, limits, audit) is the stack's job.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import {
  type CallToolResult,
  type McpHttpHandler,
  McpServer,
  type ServerContext,
  createMcpHandler,
  fromJsonSchema,
} from '@modelcontextprotocol/server';
import { loadCatalogue } from '../handlers/catalogue/index.js';
import type { Catalogue } from '../handlers/catalogue/index.js';
import { renderTemplate, toResourceContents } from '../lib/index.js';
import {
  ADMIN_REPORT,
  CRASH,
  CRASH_MESSAGE,
  CUSTOMER,
  DEMO_SERVER_INFO,
  type DemoToolDefinition,
  HELLO,
  NOTE,
  NOTES_UNAVAILABLE,
  NOTES_URI,
  REGION_STATUS,
  SLOW,
  customerRecord,
  noteLine,
  regionStatus,
} from './demo-contract.js';

/** Where the notes live; shared by every per-request server instance. */
export interface SdkNotesStore {
  lines(): Promise<string[]>;
  append(line: string): Promise<void>;
}

/** Most lines kept in memory: the oldest go first. */
const MAX_NOTES = 1000;

/** The notes in this process. */
export function memoryNotesStore(): SdkNotesStore {
  const lines: string[] = [];
  return {
    lines: async () => [...lines],
    async append(line) {
      lines.push(line);
      if (lines.length > MAX_NOTES) lines.splice(0, lines.length - MAX_NOTES);
    },
  };
}

export interface SdkDemoOptions {
  /** The catalogue (`loadCatalogue(examples/catalogue, { scheme: 'docs' })`); loaded here when absent. */
  catalogue?: Catalogue;
  /** Default: in memory. */
  notes?: SdkNotesStore;
  /** Told after each note (the handler's `notify.resourceUpdated`). */
  onNote?: (uri: string) => void;
  /** Told of an unexpected failure a tool turns into the generic -32603. Default: stderr. */
  onError?: (err: unknown) => void;
}

/** `ok()` of mcpware/tools, as the SDK takes it: the value as structuredContent plus the same JSON as text. */
function ok(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/** The SDK's registration config of a contract tool (its JSON Schemas as Standard Schemas). */
function config(def: DemoToolDefinition) {
  return {
    ...(def.title === undefined ? {} : { title: def.title }),
    description: def.description,
    inputSchema: fromJsonSchema<Record<string, unknown>>(def.inputSchema as never),
    ...(def.outputSchema === undefined
      ? {}
      : { outputSchema: fromJsonSchema<Record<string, unknown>>(def.outputSchema as never) }),
    ...(def.annotations === undefined ? {} : { annotations: def.annotations }),
  };
}

/** `slow`: waits, stopping early when the client goes away (the handler's abort signal). */
async function slow(ms: unknown, ctx: ServerContext): Promise<CallToolResult> {
  const wanted = Number(ms);
  const signal = ctx.mcpReq.signal;
  const started = Date.now();
  try {
    await sleep(wanted, undefined, { signal });
  } catch {
    // The client went away: stop early; nothing more is sent for this request.
  }
  return ok({ slept: signal.aborted ? Date.now() - started : wanted });
}

function registerTools(server: McpServer, o: Required<Pick<SdkDemoOptions, 'notes'>> & SdkDemoOptions): void {
  server.registerTool(HELLO.name, config(HELLO), ({ who }) => ok({ greeting: `Hello, ${String(who)}!` }));
  server.registerTool(CUSTOMER.name, config(CUSTOMER), ({ id }) => ok(customerRecord(String(id))));
  server.registerTool(SLOW.name, config(SLOW), ({ ms }, ctx) => slow(ms, ctx));
  // Listed for everyone: who sees it is decided in front of the server (mcpware's toolFilter groups).
  server.registerTool(ADMIN_REPORT.name, config(ADMIN_REPORT), (_args, ctx) =>
    ok({ report: 'all systems nominal', requestedBy: ctx.http?.authInfo?.clientId ?? null }),
  );
  server.registerTool(REGION_STATUS.name, config(REGION_STATUS), ({ region, verbose }) =>
    ok(regionStatus(region, verbose)),
  );
  server.registerTool(CRASH.name, config(CRASH), () => {
    try {
      throw new Error(CRASH_MESSAGE);
    } catch (err) {
      // The SDK answers any exception a tool throws (a ProtocolError too) as an isError result carrying its
      // message, which would reach the client: the failure goes to the log and the client gets a generic text.
      o.onError?.(err);
      return { content: [{ type: 'text', text: 'Internal error' }], isError: true };
    }
  });
  server.registerTool(NOTE.name, config(NOTE), async ({ text }) => {
    const line = noteLine(text);
    try {
      await o.notes.append(line);
    } catch {
      return { content: [{ type: 'text', text: NOTES_UNAVAILABLE }], isError: true };
    }
    o.onNote?.(NOTES_URI);
    return ok({ noted: line });
  });
}

function registerResources(server: McpServer, catalogue: Catalogue, notes: SdkNotesStore): void {
  for (const entry of catalogue.resources.entries) {
    const { uri, name, ...meta } = entry;
    server.registerResource(name, uri, meta, async () => {
      // The catalogue's sources ignore the call context; the entry's own URI is the canonical one.
      const body = await catalogue.resources.read(uri, undefined as never);
      if (body === undefined || 'resultType' in body) return { contents: [] };
      return { contents: [toResourceContents(uri, body)] };
    });
  }
  server.registerResource(
    'today',
    NOTES_URI,
    { title: "Today's notes", mimeType: 'text/plain' },
    async () => {
      const lines = await notes.lines();
      return {
        contents: [{ uri: NOTES_URI, mimeType: 'text/plain', text: lines.map((l) => `${l}\n`).join('') }],
      };
    },
  );
}

function registerPrompts(server: McpServer, catalogue: Catalogue): void {
  for (const def of catalogue.prompts.definitions) {
    const args = def.arguments ?? [];
    const properties = Object.fromEntries(
      args.map((a) => [a.name, { type: 'string', ...(a.description ? { description: a.description } : {}) }]),
    );
    const required = args.filter((a) => a.required === true).map((a) => a.name);
    const argsSchema = fromJsonSchema<Record<string, string>>({
      type: 'object',
      properties,
      required,
    } as never);
    server.registerPrompt(
      def.name,
      {
        ...(def.title === undefined ? {} : { title: def.title }),
        ...(def.description === undefined ? {} : { description: def.description }),
        argsSchema,
      },
      (values) => {
        const r = renderTemplate(def.template ?? '', values ?? {}, { declared: args.map((a) => a.name) });
        if (!r.ok) throw new Error(r.message);
        return { messages: [{ role: 'user', content: { type: 'text', text: r.text } }] };
      },
    );
  }
}

/** One server instance (createMcpHandler builds one per request): the contract's tools, resources and prompts. */
export function sdkDemoServer(o: SdkDemoOptions & { catalogue: Catalogue; notes: SdkNotesStore }): McpServer {
  const server = new McpServer(
    { ...DEMO_SERVER_INFO },
    {
      instructions: 'A demo of mcpware, served by the official SDK: the same tools, resources and prompts.',
      // notes://today announces its updates to the listen streams subscribed to it.
      capabilities: { resources: { subscribe: true } },
    },
  );
  registerTools(server, o);
  registerResources(server, o.catalogue, o.notes);
  registerPrompts(server, o.catalogue);
  return server;
}

/** The catalogue of examples/catalogue, as the default demo loads it. */
export function demoCatalogue(): Promise<Catalogue> {
  return loadCatalogue(path.join(__dirname, 'catalogue'), { scheme: 'docs' });
}

/**
 * The SDK's web-standard handler (`createMcpHandler`, both eras, stateless) over the contract: what `sdk()`
 * takes in-process, and what examples/upstream.ts serves over HTTP.
 */
export async function sdkDemoHandler(o: SdkDemoOptions = {}): Promise<McpHttpHandler> {
  const catalogue = o.catalogue ?? (await demoCatalogue());
  const notes = o.notes ?? memoryNotesStore();
  // Calls of `note` start after the handler exists: its listen streams are told of the new line.
  const onNote = (uri: string): void => {
    o.onNote?.(uri);
    handler.notify.resourceUpdated(uri);
  };
  const onError =
    o.onError ??
    ((err: unknown) => process.stderr.write(`sdk demo: ${err instanceof Error ? err.stack : String(err)}\n`));
  const handler = createMcpHandler(() => sdkDemoServer({ ...o, catalogue, notes, onNote, onError }));
  return handler;
}

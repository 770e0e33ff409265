/**
 * The server the official MCP conformance suite (`@modelcontextprotocol/conformance`) runs against: the fixtures
 * its server scenarios call (the `test_*` tools, prompts and resources), built from mcpware's own pieces and
 * served in both eras (2026-07-28 stateless, 2025-11-25 legacy) on one endpoint.
 *
 *   npm run conformance:server          # PORT (default 3000) on 127.0.0.1, endpoint /mcp
 *   npm run conformance                 # starts it on a free port, runs the suites, stops it
 *
 * It binds 127.0.0.1 only and accepts only localhost Host/Origin headers (DNS-rebinding protection).
 * Nothing here is needed to use mcpware: it is a test fixture, and a tour of the streaming, listen, MRTR and tasks
 * APIs (the tasks scenarios' fixtures are in examples/conformance-tasks.ts).
 */
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonObject } from '../lib/jsonrpc.js';
import { type InputRequest, elicitationRequest, listRootsRequest, samplingRequest } from '../lib/mrtr.js';
import { ChangeFeed } from '../handlers/changes/index.js';
import { checkHeaders } from '../middleware/check-headers/index.js';
import { classifyRevision } from '../middleware/classify-revision/index.js';
import { completion } from '../handlers/completion/index.js';
import { dispatch } from '../middleware/dispatch/index.js';
import { guardOrigin } from '../middleware/guard-origin/index.js';
import type { CallContext } from '../core/contract.js';
import { methodGuard } from '../middleware/method-guard/index.js';
import { parse } from '../middleware/parse/index.js';
import { type PromptDefinition, type PromptSource, prompts } from '../handlers/prompts/index.js';
import { type ResourceSource, memoryResources, resources } from '../handlers/resources/index.js';
import { rejectBatch } from '../middleware/reject-batch/index.js';
import {
  type Tool,
  ToolRegistry,
  audioBlock,
  embeddedResource,
  imageBlock,
  textBlock,
  textResult,
  toolError,
} from '../handlers/tools/index.js';
import { taskTools } from './conformance-tasks.js';

/** A 1×1 red PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const PNG = Buffer.from(PNG_BASE64, 'base64');

/** A tiny valid WAV file: 8 kHz, mono, 8-bit PCM, 8 samples of silence. */
function tinyWav(): Buffer {
  const samples = 8;
  const b = Buffer.alloc(44 + samples, 0x80);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + samples, 4);
  b.write('WAVE', 8, 'ascii');
  b.write('fmt ', 12, 'ascii');
  b.writeUInt32LE(16, 16); // fmt chunk size
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(8000, 24); // sample rate
  b.writeUInt32LE(8000, 28); // byte rate
  b.writeUInt16LE(1, 32); // block align
  b.writeUInt16LE(8, 34); // bits per sample
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(samples, 40);
  return b;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The content of an accepted elicitation answer, else undefined. */
function accepted(answer: JsonObject | undefined): JsonObject | undefined {
  return answer?.action === 'accept' && isObj(answer.content) ? answer.content : undefined;
}

/** The text of a sampling answer, else undefined. */
function sampledText(answer: JsonObject | undefined): string | undefined {
  const c = answer?.content;
  return isObj(c) && c.type === 'text' && typeof c.text === 'string' ? c.text : undefined;
}

const NAME_SCHEMA: JsonObject = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
};

/** Ask for the input requests whose answer is missing; the state rides along. */
function askFor(ctx: CallContext, requests: Record<string, InputRequest>, state?: unknown) {
  const missing: Record<string, InputRequest> = {};
  for (const [k, r] of Object.entries(requests)) if (ctx.inputResponses?.[k] === undefined) missing[k] = r;
  return ctx.inputRequired!({ inputRequests: missing, state });
}

export interface ConformanceServer {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

/** Build and start the conformance server on 127.0.0.1:`port` (0 picks a free port). */
export async function startConformanceServer(port: number): Promise<ConformanceServer> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;

  // --- Tools ------------------------------------------------------------------------------------------------------
  const tools = new ToolRegistry();
  const simple: Tool[] = [
    {
      name: 'test_simple_text',
      description: 'Returns a simple text response',
      call: () => textResult('This is a simple text response for testing.'),
    },
    {
      name: 'test_image_content',
      description: 'Returns an image (a 1×1 red PNG)',
      call: () => ({ content: [imageBlock(PNG, 'image/png')] }),
    },
    {
      name: 'test_audio_content',
      description: 'Returns audio (a tiny WAV)',
      call: () => ({ content: [audioBlock(tinyWav(), 'audio/wav')] }),
    },
    {
      name: 'test_embedded_resource',
      description: 'Returns an embedded resource',
      call: () => ({
        content: [
          embeddedResource({
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          }),
        ],
      }),
    },
    {
      name: 'test_multiple_content_types',
      description: 'Returns text, an image and an embedded resource',
      call: () => ({
        content: [
          textBlock('Multiple content types test:'),
          imageBlock(PNG, 'image/png'),
          embeddedResource({
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          }),
        ],
      }),
    },
    {
      name: 'test_tool_with_logging',
      description: 'Sends three info log notifications while it runs',
      call: async (_args, ctx) => {
        ctx.log?.('info', 'Tool execution started');
        await sleep(50, ctx.signal);
        ctx.log?.('info', 'Tool processing data');
        await sleep(50, ctx.signal);
        ctx.log?.('info', 'Tool execution completed');
        return textResult('Tool with logging executed successfully');
      },
    },
    {
      name: 'test_logging_tool',
      description: 'Logs at info (sent only when the request names a log level)',
      call: (_args, ctx) => {
        ctx.log?.('info', 'test_logging_tool ran');
        return textResult('Logging tool executed');
      },
    },
    {
      name: 'test_error_handling',
      description: 'Always fails with a tool error',
      call: () => toolError('This tool intentionally returns an error for testing'),
    },
    {
      name: 'test_tool_with_progress',
      description: 'Reports progress 0, 50 and 100 of 100',
      call: async (_args, ctx) => {
        ctx.progress?.(0, 100);
        await sleep(50, ctx.signal);
        ctx.progress?.(50, 100);
        await sleep(50, ctx.signal);
        ctx.progress?.(100, 100);
        return textResult('Tool with progress executed successfully');
      },
    },
    {
      name: 'test_header_param',
      description: 'Echoes a region mirrored into the Mcp-Param-Region header',
      inputSchema: {
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      },
      call: (args) => textResult(`Region: ${String(args.region)}`),
    },
    {
      name: 'json_schema_2020_12_tool',
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      },
      call: (args) => textResult(`Received: ${JSON.stringify(args)}`),
    },
    {
      name: 'test_missing_capability',
      description: 'Needs the client sampling capability (-32021 without it)',
      call: (_args, ctx) => {
        ctx.requireClientCapabilities?.({ sampling: {} });
        return textResult('The client declared sampling');
      },
    },
  ];

  // Tools that ask the client for input: MRTR in the modern era, real server-to-client requests in the legacy one.
  const asking: Tool[] = [
    {
      name: 'test_sampling',
      description: 'Asks the client to sample an LLM with the given prompt',
      inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
      call: (args, ctx) => {
        const text = sampledText(ctx.inputResponses?.llm);
        if (text === undefined) {
          return ctx.inputRequired!({
            inputRequests: {
              llm: samplingRequest({
                messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
                maxTokens: 100,
              }),
            },
          });
        }
        return textResult(`LLM response: ${text}`);
      },
    },
    {
      name: 'test_elicitation',
      description: 'Asks the user for a username and an email',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      call: (args, ctx) => {
        const answer = ctx.inputResponses?.user;
        if (answer === undefined) {
          return ctx.inputRequired!({
            inputRequests: {
              user: elicitationRequest(String(args.message), {
                type: 'object',
                properties: {
                  username: { type: 'string', description: "User's response" },
                  email: { type: 'string', description: "User's email address" },
                },
                required: ['username', 'email'],
              }),
            },
          });
        }
        return textResult(`User response: ${JSON.stringify(answer)}`);
      },
    },
    {
      name: 'test_elicitation_sep1034_defaults',
      description: 'Elicits a form whose fields carry default values (SEP-1034)',
      call: (_args, ctx) => {
        const answer = ctx.inputResponses?.form;
        if (answer === undefined) {
          return ctx.inputRequired!({
            inputRequests: {
              form: elicitationRequest('Please review and update the form fields with defaults', {
                type: 'object',
                properties: {
                  name: { type: 'string', description: 'User name', default: 'John Doe' },
                  age: { type: 'integer', description: 'User age', default: 30 },
                  score: { type: 'number', description: 'User score', default: 95.5 },
                  status: {
                    type: 'string',
                    description: 'User status',
                    enum: ['active', 'inactive', 'pending'],
                    default: 'active',
                  },
                  verified: { type: 'boolean', description: 'Verification status', default: true },
                },
                required: [],
              }),
            },
          });
        }
        return textResult(
          `Elicitation completed: action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`,
        );
      },
    },
    {
      name: 'test_elicitation_sep1330_enums',
      description: 'Elicits a form with every enum variant (SEP-1330)',
      call: (_args, ctx) => {
        const answer = ctx.inputResponses?.form;
        if (answer === undefined) {
          return ctx.inputRequired!({
            inputRequests: {
              form: elicitationRequest('Please select options from the enum fields', {
                type: 'object',
                properties: {
                  untitledSingle: {
                    type: 'string',
                    description: 'Select one option',
                    enum: ['option1', 'option2', 'option3'],
                  },
                  titledSingle: {
                    type: 'string',
                    description: 'Select one option with titles',
                    oneOf: [
                      { const: 'value1', title: 'First Option' },
                      { const: 'value2', title: 'Second Option' },
                      { const: 'value3', title: 'Third Option' },
                    ],
                  },
                  legacyEnum: {
                    type: 'string',
                    description: 'Select one option (legacy)',
                    enum: ['opt1', 'opt2', 'opt3'],
                    enumNames: ['Option One', 'Option Two', 'Option Three'],
                  },
                  untitledMulti: {
                    type: 'array',
                    description: 'Select multiple options',
                    items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                  },
                  titledMulti: {
                    type: 'array',
                    description: 'Select multiple options with titles',
                    items: {
                      anyOf: [
                        { const: 'value1', title: 'First Choice' },
                        { const: 'value2', title: 'Second Choice' },
                        { const: 'value3', title: 'Third Choice' },
                      ],
                    },
                  },
                },
                required: [],
              }),
            },
          });
        }
        return textResult(
          `Elicitation completed: action=${String(answer.action)}, content=${JSON.stringify(answer.content ?? {})}`,
        );
      },
    },
    {
      name: 'test_streaming_elicitation',
      description: 'Needs elicitation; answers on its request stream with an input-required result',
      call: (_args, ctx) => {
        ctx.requireClientCapabilities?.({ elicitation: {} });
        ctx.progress?.(1, 2, 'asking the user');
        const ok = accepted(ctx.inputResponses?.confirm);
        if (!ok) {
          return ctx.inputRequired!({
            inputRequests: {
              confirm: elicitationRequest('Continue?', {
                type: 'object',
                properties: { ok: { type: 'boolean' } },
                required: ['ok'],
              }),
            },
          });
        }
        return textResult('Streaming elicitation completed');
      },
    },
    {
      name: 'test_input_required_result_elicitation',
      description: 'MRTR: asks for the user name by elicitation',
      call: (_args, ctx) => {
        const name = accepted(ctx.inputResponses?.user_name)?.name;
        if (typeof name !== 'string') {
          return ctx.inputRequired!({
            inputRequests: { user_name: elicitationRequest('What is your name?', NAME_SCHEMA) },
          });
        }
        return textResult(`Hello, ${name}!`);
      },
    },
    {
      name: 'test_input_required_result_sampling',
      description: 'MRTR: asks the client to sample an LLM',
      call: (_args, ctx) => {
        const text = sampledText(ctx.inputResponses?.capital_question);
        if (text === undefined) {
          return ctx.inputRequired!({
            inputRequests: {
              capital_question: samplingRequest({
                messages: [
                  { role: 'user', content: { type: 'text', text: 'What is the capital of France?' } },
                ],
                maxTokens: 100,
              }),
            },
          });
        }
        return textResult(`The model said: ${text}`);
      },
    },
    {
      name: 'test_input_required_result_list_roots',
      description: 'MRTR: asks the client for its roots',
      call: (_args, ctx) => {
        const roots = ctx.inputResponses?.client_roots?.roots;
        if (!Array.isArray(roots)) {
          return ctx.inputRequired!({ inputRequests: { client_roots: listRootsRequest() } });
        }
        const uris = roots.map((r) => (isObj(r) && typeof r.uri === 'string' ? r.uri : '?'));
        return textResult(`Client roots: ${uris.join(', ')}`);
      },
    },
    {
      name: 'test_input_required_result_request_state',
      description: 'MRTR: round-trips a signed requestState',
      call: (_args, ctx) => {
        const state = ctx.requestState as { step?: string } | undefined;
        const ok = accepted(ctx.inputResponses?.confirm);
        if (state?.step !== 'confirm' || !ok) {
          return askFor(
            ctx,
            {
              confirm: elicitationRequest('Please confirm', {
                type: 'object',
                properties: { ok: { type: 'boolean' } },
                required: ['ok'],
              }),
            },
            { step: 'confirm' },
          );
        }
        return textResult('state-ok: the requestState came back intact and the user confirmed');
      },
    },
    {
      name: 'test_input_required_result_multiple_inputs',
      description: 'MRTR: elicitation, sampling and roots in one round',
      call: (_args, ctx) => {
        const r = ctx.inputResponses ?? {};
        const name = accepted(r.user_name)?.name;
        const greeting = sampledText(r.greeting);
        const roots = r.client_roots?.roots;
        if (typeof name !== 'string' || greeting === undefined || !Array.isArray(roots)) {
          return ctx.inputRequired!({
            inputRequests: {
              user_name: elicitationRequest('What is your name?', NAME_SCHEMA),
              greeting: samplingRequest({
                messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
                maxTokens: 50,
              }),
              client_roots: listRootsRequest(),
            },
            state: { round: 1 },
          });
        }
        return textResult(`${greeting} ${name} (${roots.length} roots)`);
      },
    },
    {
      name: 'test_input_required_result_multi_round',
      description: 'MRTR: two rounds of elicitation with an evolving requestState',
      call: (_args, ctx) => {
        const state = ctx.requestState as { round?: number; name?: string } | undefined;
        if (state?.round === 2) {
          const color = accepted(ctx.inputResponses?.step2)?.color;
          if (typeof color === 'string') return textResult(`${state.name ?? '?'} likes ${color}`);
        }
        if (state?.round === 1 || state?.round === 2) {
          const name = state.round === 2 ? state.name : accepted(ctx.inputResponses?.step1)?.name;
          if (typeof name === 'string') {
            return ctx.inputRequired!({
              inputRequests: {
                step2: elicitationRequest('Step 2: What is your favorite color?', {
                  type: 'object',
                  properties: { color: { type: 'string' } },
                  required: ['color'],
                }),
              },
              state: { round: 2, name },
            });
          }
        }
        return ctx.inputRequired!({
          inputRequests: { step1: elicitationRequest('Step 1: What is your name?', NAME_SCHEMA) },
          state: { round: 1 },
        });
      },
    },
    {
      name: 'test_input_required_result_tampered_state',
      description: 'MRTR: the requestState is HMAC-signed; a tampered one is refused',
      call: (_args, ctx) => {
        const state = ctx.requestState as { issued?: boolean } | undefined;
        if (state?.issued === true && accepted(ctx.inputResponses?.confirm)) {
          return textResult('The signed requestState verified');
        }
        return ctx.inputRequired!({
          inputRequests: {
            confirm: elicitationRequest('Please confirm', {
              type: 'object',
              properties: { ok: { type: 'boolean' } },
              required: ['ok'],
            }),
          },
          state: { issued: true },
        });
      },
    },
    {
      name: 'test_input_required_result_capabilities',
      description: 'MRTR: asks only for what the client declared it can answer',
      call: (_args, ctx) => {
        if (ctx.inputResponses !== undefined && Object.keys(ctx.inputResponses).length > 0) {
          return textResult(`Answered: ${Object.keys(ctx.inputResponses).join(', ')}`);
        }
        const caps = ctx.clientCapabilities;
        const requests: Record<string, InputRequest> = {};
        if (isObj(caps.elicitation))
          requests.user_name = elicitationRequest('What is your name?', NAME_SCHEMA);
        if (isObj(caps.sampling)) {
          requests.greeting = samplingRequest({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          });
        }
        if (isObj(caps.roots)) requests.client_roots = listRootsRequest();
        // Nothing the client can answer: the tool needs at least one of them.
        if (Object.keys(requests).length === 0) ctx.requireClientCapabilities?.({ sampling: {} });
        return ctx.inputRequired!({ inputRequests: requests });
      },
    },
  ];

  // Hooks that change the lists while subscriptions/listen streams are open.
  let toolVersion = 1;
  const dynamicTool = (): Tool => ({
    name: 'test_dynamic_tool',
    description: `A tool that test_trigger_tool_change re-registers (version ${toolVersion})`,
    call: () => textResult(`Dynamic tool, version ${toolVersion}`),
  });
  const promptChanges = new ChangeFeed();
  const resourceChanges = new ChangeFeed();
  let promptVersion = 1;
  let watchedVersion = 1;
  const hooks: Tool[] = [
    {
      name: 'test_trigger_tool_change',
      description: 'Re-registers test_dynamic_tool (tools/list_changed on listen streams)',
      call: () => {
        toolVersion++;
        // Removed and added back last: the set and the order of the list stay the same, its content changes.
        tools.remove('test_dynamic_tool');
        tools.register(dynamicTool());
        return textResult(`test_dynamic_tool is now version ${toolVersion}`);
      },
    },
    {
      name: 'test_trigger_prompt_change',
      description: 'Changes test_dynamic_prompt (prompts/list_changed on listen streams)',
      call: () => {
        promptVersion++;
        promptChanges.listChanged();
        return textResult(`test_dynamic_prompt is now version ${promptVersion}`);
      },
    },
    {
      name: 'test_trigger_resource_update',
      description:
        'Changes test://watched-resource (resources/updated on listen streams that subscribed to it)',
      call: () => {
        watchedVersion++;
        resourceChanges.updated('test://watched-resource');
        return textResult(`test://watched-resource is now version ${watchedVersion}`);
      },
    },
  ];
  tools.register(...simple, ...asking, ...hooks, dynamicTool(), ...taskTools());

  // --- Prompts ----------------------------------------------------------------------------------------------------
  const promptDefs: PromptDefinition[] = [
    {
      name: 'test_simple_prompt',
      description: 'A simple prompt without arguments',
      template: 'This is a simple prompt for testing.',
    },
    {
      name: 'test_prompt_with_arguments',
      description: 'A prompt with two required arguments',
      arguments: [
        { name: 'arg1', description: 'First test argument', required: true },
        { name: 'arg2', description: 'Second test argument', required: true },
      ],
      template: "Prompt with arguments: arg1='{{arg1}}', arg2='{{arg2}}'",
      complete: (_argument, value) => ['paris', 'park', 'party'].filter((v) => v.startsWith(value)),
    },
    {
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt embedding a resource',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
      render: (args) => [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: args.resourceUri ?? 'test://example-resource',
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    },
    {
      name: 'test_prompt_with_image',
      description: 'A prompt with an image',
      render: () => [
        { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    },
    {
      name: 'test_input_required_result_prompt',
      description: 'MRTR on prompts/get: asks for the context first',
      render: (_args, ctx) => {
        const context = accepted(ctx.inputResponses?.user_context)?.context;
        if (typeof context !== 'string') {
          return ctx.inputRequired!({
            inputRequests: {
              user_context: elicitationRequest('What context should the prompt use?', {
                type: 'object',
                properties: { context: { type: 'string' } },
                required: ['context'],
              }),
            },
          });
        }
        return `Use this context: ${context}`;
      },
    },
  ];
  const dynamicPrompts: PromptSource = {
    list: () => [
      {
        name: 'test_dynamic_prompt',
        description: `A prompt that test_trigger_prompt_change changes (version ${promptVersion})`,
        template: `Dynamic prompt, version ${promptVersion}`,
      },
    ],
  };
  const promptsHandler = prompts({ prompts: promptDefs, sources: [dynamicPrompts], changes: promptChanges });

  // --- Resources --------------------------------------------------------------------------------------------------
  const watched: ResourceSource = {
    list: () => [
      {
        uri: 'test://watched-resource',
        name: 'watched-resource',
        description: 'Changes on demand',
        mimeType: 'text/plain',
      },
    ],
    read: (uri) =>
      uri === 'test://watched-resource'
        ? { text: `Watched resource, version ${watchedVersion}`, mimeType: 'text/plain' }
        : undefined,
  };
  const resourcesHandler = resources({
    sources: [
      memoryResources([
        {
          uri: 'test://static-text',
          name: 'static-text',
          description: 'A static text resource',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
        {
          uri: 'test://static-binary',
          name: 'static-binary',
          description: 'A static binary resource (a PNG)',
          mimeType: 'image/png',
          bytes: PNG,
        },
      ]),
      watched,
    ],
    templates: [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'template-data',
        description: 'Data for an id',
        mimeType: 'application/json',
        read: ({ id }) => ({
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          mimeType: 'application/json',
        }),
        complete: (_variable, value) => ['123', '456'].filter((v) => v.startsWith(value)),
      },
    ],
    changes: resourceChanges,
  });

  // --- The stack --------------------------------------------------------------------------------------------------
  const local = [`127.0.0.1:${actual}`, `localhost:${actual}`, `[::1]:${actual}`];
  const mcp = dispatch({
    handlers: {
      tools,
      prompts: promptsHandler,
      resources: resourcesHandler,
      completion: completion({ prompts: promptsHandler, resources: resourcesHandler }),
    },
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
      logging: {},
    },
    serverInfo: { name: 'mcpware-conformance', version: '0.1.0' },
    instructions: 'The fixtures of the MCP conformance suite, served by mcpware.',
    // Legacy clients cannot send a level per request, and logging/setLevel cannot be remembered statelessly.
    legacyLogLevel: 'debug',
    // The conformance suite's clients carry no credentials: this server wants no authentication.
    anonymous: true,
    // The tasks extension (the tasks-* scenarios; fixtures in examples/conformance-tasks.ts), tasks in memory.
    tasks: {},
  });
  const app = express();
  app.use(
    '/mcp',
    guardOrigin({ allowedOrigins: local.map((h) => `http://${h}`), allowedHosts: local }),
    methodGuard(),
    parse(),
    rejectBatch(),
    classifyRevision(),
    checkHeaders({ paramHeaders: tools.paramHeaders }),
    mcp,
  );
  server.on('request', app);

  return {
    server,
    url: `http://127.0.0.1:${actual}/mcp`,
    async close() {
      await mcp.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Run directly (`tsx examples/conformance-server.ts`): serve until SIGINT/SIGTERM.
if (require.main === module) {
  const raw = process.env.PORT ?? '3000';
  const port = Number(raw);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`conformance-server: PORT must be a port number, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  startConformanceServer(port).then(
    (s) => {
      process.stdout.write(`conformance server listening on ${s.url}\n`);
      let stopping = false;
      const stop = (): void => {
        if (stopping) return;
        stopping = true;
        s.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    (err: unknown) => {
      process.stderr.write(`conformance-server: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

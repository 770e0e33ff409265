/**
 * The fixtures of the conformance suite's tasks scenarios (the `io.modelcontextprotocol/tasks` extension,
 * `tasks-*`): a sync-only tool and the task-supporting ones, registered on the conformance server
 * (examples/conformance-server.ts), whose dispatcher has `tasks` enabled. Each tool's `call` is the same function
 * however the client calls it: directly, or as the work of a task.
 * @see docs/guides/tasks.md
 */
import type { CallContext } from '../core/contract.js';
import { McpError } from '../lib/errors.js';
import type { JsonObject } from '../lib/jsonrpc.js';
import { elicitationRequest } from '../lib/mrtr.js';
import { type Tool, textResult, toolError } from '../handlers/tools/index.js';

/** Wait `ms`, or less when `signal` aborts (a `tasks/cancel`, or the client going away). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const isObj = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The content of an accepted elicitation answer, else undefined. */
function accepted(answer: JsonObject | undefined): JsonObject | undefined {
  return answer?.action === 'accept' && isObj(answer.content) ? answer.content : undefined;
}

const CONFIRM_SCHEMA: JsonObject = {
  type: 'object',
  properties: { confirm: { type: 'boolean' } },
  required: ['confirm'],
};

const NAME_SCHEMA: JsonObject = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
};

/** Ask for the input requests whose answer is missing (in a task: one `input_required` round). */
function askMissing(ctx: CallContext, requests: Record<string, ReturnType<typeof elicitationRequest>>) {
  const missing: Record<string, ReturnType<typeof elicitationRequest>> = {};
  for (const [k, r] of Object.entries(requests)) if (ctx.inputResponses?.[k] === undefined) missing[k] = r;
  return Object.keys(missing).length > 0 ? ctx.inputRequired!({ inputRequests: missing }) : undefined;
}

/** The tools the tasks scenarios call (`tools/list` must hold them all). */
export function taskTools(): Tool[] {
  return [
    {
      name: 'greet',
      description: 'Greets someone (sync only: never a task)',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } } },
      call: ({ name }) => textResult(`Hello, ${typeof name === 'string' ? name : 'World'}!`),
    },
    {
      name: 'slow_compute',
      description: 'Sleeps `seconds` (0: at once), then answers; a task of it ends cancelled on tasks/cancel',
      inputSchema: {
        type: 'object',
        properties: {
          seconds: { type: 'number', minimum: 0, maximum: 3600 },
          label: { type: 'string' },
        },
      },
      taskSupport: 'optional',
      call: async ({ seconds, label }, ctx) => {
        const s = typeof seconds === 'number' ? seconds : 0;
        if (s > 0) await sleep(s * 1000, ctx.signal);
        if (ctx.signal.aborted) return toolError('slow_compute was cancelled');
        return textResult(`slow_compute ${typeof label === 'string' ? label : ''} done after ${s} s`.trim());
      },
    },
    {
      name: 'failing_job',
      description: 'Fails with a tool error after about a second (only as a task)',
      inputSchema: { type: 'object' },
      taskSupport: 'required',
      call: async (_args, ctx) => {
        await sleep(1000, ctx.signal);
        return toolError('failing_job failed, as it always does');
      },
    },
    {
      name: 'protocol_error_job',
      description: 'Fails with a JSON-RPC error (a task of it ends failed)',
      inputSchema: { type: 'object' },
      taskSupport: 'optional',
      call: () => {
        throw new McpError(-32000, 'protocol_error_job failed with a protocol error, as it always does', {
          reason: 'fixture',
        });
      },
    },
    {
      name: 'confirm_delete',
      description: 'Asks to confirm (one elicitation), then "deletes" the file',
      inputSchema: {
        type: 'object',
        properties: { filename: { type: 'string' } },
        required: ['filename'],
      },
      taskSupport: 'optional',
      call: ({ filename }, ctx) => {
        const asked = askMissing(ctx, {
          confirm: elicitationRequest(`Delete ${String(filename)}?`, CONFIRM_SCHEMA),
        });
        if (asked) return asked;
        const yes = accepted(ctx.inputResponses?.confirm)?.confirm === true;
        return textResult(yes ? `Deleted ${String(filename)}` : `Kept ${String(filename)}`);
      },
    },
    {
      name: 'multi_input',
      description: 'Asks two questions at once, then answers with both',
      inputSchema: { type: 'object' },
      taskSupport: 'optional',
      call: (_args, ctx) => {
        const asked = askMissing(ctx, {
          first: elicitationRequest('First name?', NAME_SCHEMA),
          second: elicitationRequest('Second name?', NAME_SCHEMA),
        });
        if (asked) return asked;
        const name = (k: string) => String(accepted(ctx.inputResponses?.[k])?.name ?? '(declined)');
        return textResult(`Got ${name('first')} and ${name('second')}`);
      },
    },
    {
      name: 'test_tool_with_task',
      description: 'Asks for your name in the request (MRTR), then greets you from a task',
      inputSchema: { type: 'object' },
      taskSupport: 'required',
      // Before the task exists: an input-required round on tools/call itself; the task's work sees the answer.
      prepare: (_args, ctx) =>
        askMissing(ctx, { user_name: elicitationRequest('What is your name?', NAME_SCHEMA) }),
      call: (_args, ctx) => {
        const name = accepted(ctx.inputResponses?.user_name)?.name;
        return textResult(`Hello, ${typeof name === 'string' ? name : 'stranger'}, from a task!`);
      },
    },
  ];
}

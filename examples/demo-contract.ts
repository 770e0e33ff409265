/**
 * The demo's contract as data: the names, descriptions, schemas and answers of its tools, shared by the
 * mcpware tools (`demoTools()` in examples/demo.ts) and the official-SDK ones (examples/sdk-demo-tools.ts), so
 * the three modes of the demo serve the same surface. Plain values only: no mcpware and no SDK import.
 */

/** How one tool is described in `tools/list`. */
export interface DemoToolDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly outputSchema?: Record<string, unknown>;
  readonly annotations?: Record<string, boolean>;
}

export const DEMO_SERVER_INFO = { name: 'mcpware-demo', version: '0.1.0' } as const;

/** The group that sees `admin_report`. */
export const ADMIN_GROUP = 'admin';

/** Longest `slow` wait, in ms. */
export const MAX_SLOW_MS = 10_000;

/** The notes' resource, and the longest note (the `note` tool's input schema). */
export const NOTES_URI = 'notes://today';
export const MAX_NOTE_LENGTH = 1000;

/** What the `crash` tool throws: a secret that must never reach a client. */
export const CRASH_MESSAGE = 'database password is hunter2 (this must never reach a client)';

export const HELLO: DemoToolDefinition = {
  name: 'hello',
  title: 'Say hello',
  description: 'Greets someone by name.',
  inputSchema: {
    type: 'object',
    properties: { who: { type: 'string', description: 'Who to greet' } },
    required: ['who'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { greeting: { type: 'string' } },
    required: ['greeting'],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
};

export const CUSTOMER: DemoToolDefinition = {
  name: 'customer',
  description: 'Looks up a customer record (holds personal data: watch the redaction).',
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string' } },
    required: ['id'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true },
};

export const SLOW: DemoToolDefinition = {
  name: 'slow',
  description: 'Waits for the given number of milliseconds, charging the time to your budget.',
  inputSchema: {
    type: 'object',
    properties: { ms: { type: 'integer', minimum: 0, maximum: MAX_SLOW_MS } },
    required: ['ms'],
    additionalProperties: false,
  },
};

export const ADMIN_REPORT: DemoToolDefinition = {
  name: 'admin_report',
  description: 'Usage report for administrators.',
  inputSchema: { type: 'object', additionalProperties: false },
};

export const REGION_STATUS: DemoToolDefinition = {
  name: 'region_status',
  description: 'Status of a region; the region is mirrored into the Mcp-Param-Region header.',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      verbose: { type: 'boolean' },
    },
    required: ['region'],
    additionalProperties: false,
  },
};

export const CRASH: DemoToolDefinition = {
  name: 'crash',
  description: 'Fails with an unexpected error (the answer leaks neither message nor stack).',
  inputSchema: { type: 'object', additionalProperties: false },
};

export const NOTE: DemoToolDefinition = {
  name: 'note',
  description: `Appends a line to ${NOTES_URI} and tells the listen streams subscribed to it.`,
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1, maxLength: MAX_NOTE_LENGTH } },
    required: ['text'],
    additionalProperties: false,
  },
};

/** Longest `report`, in seconds. */
export const MAX_REPORT_SECONDS = 60;

export const REPORT: DemoToolDefinition = {
  name: 'report',
  description:
    'Prepares a report in the given number of seconds. A client that declares the tasks extension ' +
    '(io.modelcontextprotocol/tasks) gets a task to poll with tasks/get (any instance answers with REDIS_URL).',
  inputSchema: {
    type: 'object',
    properties: { seconds: { type: 'integer', minimum: 1, maximum: MAX_REPORT_SECONDS } },
    required: ['seconds'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: { report: { type: 'string' } },
    required: ['report'],
  },
};

/** `report`'s answer. */
export function reportResult(seconds: unknown): { report: string } {
  return { report: `done in ${String(seconds)} s` };
}

/** The customer record: an e-mail address, a phone number, a card number and an IPv4 address. */
export function customerRecord(id: string): Record<string, string> {
  return {
    id,
    name: 'Sam Carter',
    email: 'sam.carter@acme.com',
    phone: '+1 415 555 0132',
    card: '4111 1111 1111 1111',
    lastLoginIp: '203.0.113.42',
  };
}

/** `region_status`'s answer. */
export function regionStatus(region: unknown, verbose: unknown): Record<string, unknown> {
  return verbose === true
    ? { region, status: 'ok', checkedAt: new Date().toISOString() }
    : { region, status: 'ok' };
}

/** One note is one line. */
export function noteLine(text: unknown): string {
  return String(text).replace(/[\r\n]+/g, ' ');
}

/** The note tool's answer when the notes cannot be written. */
export const NOTES_UNAVAILABLE = 'The notes are unavailable right now; try again shortly.';

/**
 * The opt-in captures over HTTP: a tools/call's arguments and result on its span only when asked for, only
 * after redact() (masked by its rules, clipped to 4096 characters), never a failed call's result; without
 * redact() in the stack nothing is captured and one warning is logged per instance.
 */
import request from 'supertest';
import { type Sdk, modern, modernHeaders, only, serve, startSdk } from './otel-harness';
import { memoryLogger } from '../../support/dispatch-harness';

let sdk: Sdk;
beforeEach(() => {
  sdk = startSdk();
});
afterEach(async () => {
  await sdk.shutdown();
});

const EMAIL = 'alice.secret@example.com';

const call = (server: ReturnType<typeof serve>, name: string, args: Record<string, unknown>) =>
  request(server)
    .post('/mcp')
    .set(modernHeaders('tools/call', name))
    .send(modern('tools/call', { name, arguments: args }));

test('by default neither arguments nor results are captured', async () => {
  const server = serve('node:http', { otel: { tracerProvider: sdk.tracerProvider } });
  await call(server, 'echo', { who: EMAIL });
  const span = only(sdk.spans());
  expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
  expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
});

test('captured after redact(): the arguments and the result as JSON, masked', async () => {
  const server = serve('node:http', {
    otel: { tracerProvider: sdk.tracerProvider, captureArguments: true, captureResults: true },
  });
  const res = await call(server, 'echo', { who: EMAIL, n: 1 });
  expect(res.status).toBe(200);
  const span = only(sdk.spans());
  const args = span.attributes['gen_ai.tool.call.arguments'] as string;
  const result = span.attributes['gen_ai.tool.call.result'] as string;
  expect(JSON.parse(args)).toEqual({ who: expect.any(String), n: 1 });
  expect(args).not.toContain(EMAIL);
  expect(JSON.parse(result).structuredContent).toEqual({ echoed: { who: expect.any(String), n: 1 } });
  expect(result).not.toContain(EMAIL);
});

test('a capture is clipped to 4096 characters', async () => {
  const server = serve('node:http', {
    otel: { tracerProvider: sdk.tracerProvider, captureArguments: true, captureResults: true },
  });
  await call(server, 'echo', { long: 'x'.repeat(10_000) });
  const span = only(sdk.spans());
  expect((span.attributes['gen_ai.tool.call.arguments'] as string).length).toBe(4096);
  expect((span.attributes['gen_ai.tool.call.result'] as string).length).toBe(4096);
});

test("a failed call's result is not captured", async () => {
  const server = serve('node:http', {
    otel: { tracerProvider: sdk.tracerProvider, captureResults: true },
  });
  await call(server, 'sorry', {});
  expect(only(sdk.spans()).attributes['gen_ai.tool.call.result']).toBeUndefined();
});

test('without redact() nothing is captured, and one warning says so', async () => {
  const logger = memoryLogger();
  const server = serve('node:http', {
    redact: false,
    otel: { tracerProvider: sdk.tracerProvider, captureArguments: true, captureResults: true, logger },
  });
  await call(server, 'echo', { who: EMAIL });
  await call(server, 'echo', { who: EMAIL });
  for (const span of sdk.spans()) {
    expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(span.attributes['gen_ai.tool.call.result']).toBeUndefined();
  }
  const warnings = logger.lines.filter((l) => l.message.includes('redact()'));
  expect(warnings).toHaveLength(1);
});

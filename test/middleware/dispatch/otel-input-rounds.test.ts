/**
 * An input-required round and its retry under `otel()` (real SDK): each round is a span of its own, parented by
 * the client's `_meta`, and the retry's span links to the round before it, whose context travelled in the signed
 * `requestState`.
 */
import { SpanKind } from '@opentelemetry/api';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { elicitationRequest } from '../../../lib/mrtr';
import {
  type Sdk,
  type TracedServer,
  call,
  parentOf,
  spanOf,
  startSdk,
  tracedServer,
} from '../../support/otel-across';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (span: string) => `00-${CLIENT_TRACE}-${span}-01`;
const CAPS = { elicitation: {} };
const ACCEPT = { ok: { action: 'accept', content: {} } };

describe('input-required rounds under otel()', () => {
  let sdk: Sdk;
  let s: TracedServer;
  const tools = new ToolRegistry();
  tools.register({
    name: 'confirm',
    description: 'asks before it answers',
    inputSchema: { type: 'object' },
    call: (_args, ctx) =>
      ctx.inputResponses?.ok === undefined
        ? ctx.inputRequired!({
            inputRequests: { ok: elicitationRequest('Sure?', { type: 'object' }) },
            state: 'asked',
          })
        : textResult(`confirmed (${String(ctx.requestState)})`),
  });

  beforeAll(async () => {
    sdk = startSdk();
    s = await tracedServer(sdk, { handlers: { tools } });
  });
  afterAll(async () => {
    await s.close();
    await sdk.close();
  });

  test('the retry’s span links to the first round’s; each round is parented by its own _meta', async () => {
    const args = { name: 'confirm', arguments: {} };
    const first = await call(s.url, 'tools/call', args, CAPS, {
      traceparent: traceparent('00f067aa0ba902b7'),
    });
    expect(first.result?.resultType).toBe('input_required');
    const retry = { ...args, inputResponses: ACCEPT, requestState: first.result!.requestState };
    const second = await call(s.url, 'tools/call', retry, CAPS, {
      traceparent: traceparent('1111111111111111'),
    });
    expect(second.result?.content).toEqual([{ type: 'text', text: 'confirmed (asked)' }]);
    const r1 = await spanOf(sdk, first.id);
    const r2 = await spanOf(sdk, second.id);

    for (const r of [r1, r2]) {
      expect(r.name).toBe('tools/call confirm');
      expect(r.kind).toBe(SpanKind.SERVER);
      expect(r.spanContext().traceId).toBe(CLIENT_TRACE);
    }
    expect(parentOf(r1)).toBe('00f067aa0ba902b7');
    expect(parentOf(r2)).toBe('1111111111111111');
    expect(r1.links).toEqual([]);
    expect(r2.links).toHaveLength(1);
    expect(r2.links[0]!.context.traceId).toBe(CLIENT_TRACE);
    expect(r2.links[0]!.context.spanId).toBe(r1.spanContext().spanId);
    expect(r2.links[0]!.attributes).toEqual({ 'mcpware.link': 'input_required' });
  });

  test('rounds chain: each retry links to the round that minted its state, across traces', async () => {
    const args = { name: 'confirm', arguments: {} };
    const first = await call(s.url, 'tools/call', args, CAPS);
    // The answers lack `ok`: the tool asks again, with a state minted in the second round's span.
    const decline = {
      ...args,
      inputResponses: { no: { action: 'decline' } },
      requestState: first.result!.requestState,
    };
    const second = await call(s.url, 'tools/call', decline, CAPS);
    expect(second.result?.resultType).toBe('input_required');
    const accept = { ...args, inputResponses: ACCEPT, requestState: second.result!.requestState };
    const third = await call(s.url, 'tools/call', accept, CAPS);
    expect(third.result?.content).toEqual([{ type: 'text', text: 'confirmed (asked)' }]);
    const [r1, r2, r3] = await Promise.all([first, second, third].map((c) => spanOf(sdk, c.id)));
    // No _meta traceparent: each round starts a trace of its own; the links join them.
    expect(new Set([r1, r2, r3].map((r) => r!.spanContext().traceId)).size).toBe(3);
    expect(r2!.links.map((l) => l.context)).toEqual([
      expect.objectContaining({ traceId: r1!.spanContext().traceId, spanId: r1!.spanContext().spanId }),
    ]);
    expect(r3!.links.map((l) => l.context)).toEqual([
      expect.objectContaining({ traceId: r2!.spanContext().traceId, spanId: r2!.spanContext().spanId }),
    ]);
  });

  test('a requestState that fails verification gives no link (the round is refused before anything is read)', async () => {
    const args = { name: 'confirm', arguments: {} };
    const first = await call(s.url, 'tools/call', args, CAPS);
    const token = first.result!.requestState as string;
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`;
    const bad = await call(
      s.url,
      'tools/call',
      { ...args, inputResponses: ACCEPT, requestState: forged },
      CAPS,
    );
    expect(bad.error?.code).toBe(-32602);
    const r = await spanOf(sdk, bad.id);
    expect(r.links).toEqual([]);
  });
});

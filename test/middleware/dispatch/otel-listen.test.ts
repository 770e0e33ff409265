/**
 * A `subscriptions/listen` stream under `otel()` (real SDK): its request's span lasts as long as the stream,
 * and each notification sent on it is an event (`mcpware.notification`, its method): the first
 * MAX_NOTIFICATION_EVENTS, then only the count (`mcpware.notification.count`).
 */
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ToolRegistry, textResult } from '../../../handlers/tools/index';
import { MAX_NOTIFICATION_EVENTS } from '../../../middleware/dispatch/listen';
import { type Sdk, type TracedServer, startSdk, tracedServer } from '../../support/otel-across';
import { envelope, modernHeaders, openStream, until } from '../../support/streaming';

const tool = (name: string) => ({ name, description: name, call: () => textResult(name) });
const ACK = 'notifications/subscriptions/acknowledged';
const CHANGED = 'notifications/tools/list_changed';

describe('listen streams under otel()', () => {
  let sdk: Sdk;
  let s: TracedServer;
  const tools = new ToolRegistry({ tools: [tool('base')] });

  beforeAll(async () => {
    sdk = startSdk();
    s = await tracedServer(sdk, { handlers: { tools } });
  });
  afterAll(async () => {
    await s.close();
    await sdk.close();
  });

  const listen = (id: string) =>
    openStream(
      s.url,
      {
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: envelope() },
      },
      modernHeaders('subscriptions/listen'),
    );
  const spanOf = (id: string) => (x: ReadableSpan) =>
    x.name === 'subscriptions/listen' && x.attributes['jsonrpc.request.id'] === id;

  test('the span lasts as long as the stream, its notifications as events', async () => {
    const st = await listen('sub-1');
    expect((await st.next()).method).toBe(ACK);
    tools.register(tool('t1'));
    expect((await st.next()).method).toBe(CHANGED);
    tools.remove('t1');
    expect((await st.next()).method).toBe(CHANGED);
    // Still open: its span has not ended.
    expect(sdk.spans().some(spanOf('sub-1'))).toBe(false);
    st.close();
    const span = await sdk.span(spanOf('sub-1'), 'the stream’s span');
    expect(span.kind).toBe(SpanKind.SERVER);
    const events = span.events.filter((e) => e.name === 'mcpware.notification');
    expect(events.map((e) => e.attributes)).toEqual([
      { method: ACK },
      { method: CHANGED },
      { method: CHANGED },
    ]);
    expect(span.attributes['mcpware.notification.count']).toBe(3);
  });

  test('past the first events only the count grows; a graceful end ends the span too', async () => {
    const st = await listen('sub-2');
    expect((await st.next()).method).toBe(ACK);
    const total = MAX_NOTIFICATION_EVENTS + 5;
    for (let i = 1; i < total; i++) {
      tools.register(tool(`n${i}`));
      expect((await st.next()).method).toBe(CHANGED);
    }
    for (let i = 1; i < total; i++) tools.remove(`n${i}`);
    expect((await st.next()).method).toBe(CHANGED);
    await s.mcp.close({ deadlineMs: 1000 });
    await st.ended;
    const span = await sdk.span(spanOf('sub-2'), 'the stream’s span');
    const events = span.events.filter((e) => e.name === 'mcpware.notification');
    expect(events).toHaveLength(MAX_NOTIFICATION_EVENTS);
    expect(span.attributes['mcpware.notification.count']).toBe(total + 1);
    await until(() => s.mcp.stats().listenStreams === 0, 'the stream to be gone');
  });
});

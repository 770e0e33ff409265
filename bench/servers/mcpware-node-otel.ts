/**
 * `mcpware-node` with `otel()` in front and an OpenTelemetry SDK registered as an application registers it: spans
 * through a batch span processor and the duration histogram through a periodic reader, both exported over
 * OTLP/HTTP (protobuf) to a loopback collector that discards them (another process). Next to `mcpware-node`: what
 * tracing every request costs with a real exporter.
 */
import type { RequestListener } from 'node:http';
import { compose } from '../../middleware/compose/index.js';
import { listen, serveStats } from './common.js';
import { withOtel } from './otel.js';
import { registerBenchSdk, startSink } from './otel-sdk.js';
import { fullStack } from './stack.js';

async function main(): Promise<void> {
  const sdkStats = registerBenchSdk(await startSink());
  const stack = withOtel(fullStack('mcpware-node-otel', process.env.BENCH_OUT ?? '.'), sdkStats);
  const chain = compose(stack.middlewares);
  const handler: RequestListener = (req, res) => {
    if (serveStats(req, res, stack.stats)) return;
    chain(req, res);
  };
  listen(handler, 'mcpware-node-otel');
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

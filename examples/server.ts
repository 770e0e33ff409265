/**
 * `npm start`: the mcpware demo server. Configuration comes from the environment (README, "Demo server").
 */
import http from 'node:http';
import { createDemo } from './demo.js';

async function main(): Promise<void> {
  const demo = await createDemo(process.env);
  const server = http.createServer(demo.app);
  server.listen(demo.port, demo.host, () => {
    process.stdout.write(`mcpware demo listening on ${demo.url}\n`);
  });
  demo.ready.catch((err: unknown) => {
    process.stderr.write(
      `mcpware demo: start-up failed: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  });
  // SIGTERM (or SIGINT): drain while still listening, so the balancer sees /readyz go 503 and new requests are
  // refused with 503 while the calls in flight answer; then stop listening, close the rest and exit 0. A second
  // signal exits at once (1).
  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    setTimeout(() => process.exit(1), demo.shutdownGraceMs + 10_000).unref();
    void demo.drain().then(() => {
      server.close(() => void demo.close().then(() => process.exit(0)));
      server.closeIdleConnections();
      // A connection still sending a request it will be refused: cut it rather than wait for it.
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`mcpware demo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

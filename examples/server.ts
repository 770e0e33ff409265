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
  const stop = (): void => {
    server.close(() => void demo.close().then(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`mcpware demo: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

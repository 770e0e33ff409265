/**
 * The OTLP/HTTP collector of the OpenTelemetry variants: a loopback server that accepts every export
 * (`POST /v1/traces`, `POST /v1/metrics`), reads the body and throws it away, answering the empty success
 * response of the protocol the exporter used. It runs in a process of its own (bench/servers/otel.ts starts it),
 * so the CPU the runner reports for the server under test is the server's and its exporter's only.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const json = (req.headers['content-type'] ?? '').startsWith('application/json');
    res.writeHead(req.method === 'POST' ? 200 : 405, {
      'content-type': json ? 'application/json' : 'application/x-protobuf',
    });
    res.end(json ? '{}' : undefined);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(JSON.stringify({ ready: true, name: 'otlp-sink', port, pid: process.pid }) + '\n');
});
const stop = (): void => {
  server.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

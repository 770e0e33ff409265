import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDemo, type Demo, type Env } from '../../examples/demo';

export interface RunningDemo {
  demo: Demo;
  server: http.Server;
  url: string;
  auditFile: string;
  /** Era of every MCP POST that reached the server, in order. */
  eras: string[];
  stop(): Promise<void>;
}

/** Start the demo in-process on a random loopback port, auditing to a temp file. */
export async function startDemo(env: Env = {}): Promise<RunningDemo> {
  const auditFile = path.join(mkdtempSync(path.join(tmpdir(), 'mcpware-demo-')), 'audit.log');
  // The port is only known after listen; the demo's Host allow-list uses PORT, so reserve one first.
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  // The operational log stays quiet unless a test asks for it (MCP_LOG_LEVEL in `env`).
  const demo = await createDemo({
    HOST: '127.0.0.1',
    PORT: String(port),
    MCP_AUDIT_LOG: auditFile,
    MCP_LOG_LEVEL: 'off',
    ...env,
  });
  const eras: string[] = [];
  const server = http.createServer((req, res) => {
    const isMcp = req.url?.startsWith('/mcp') === true; // Express rewrites req.url inside the mount
    res.on('finish', () => {
      // Only POSTs carry MCP messages to count (a legacy session's GET stream carries the server's, and DELETE none).
      if (isMcp && req.method === 'POST') eras.push(req.locals?.mcp?.era ?? 'none');
    });
    demo.app(req, res);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    demo,
    server,
    url: `http://127.0.0.1:${port}/mcp`,
    auditFile,
    eras,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await demo.close();
    },
  };
}

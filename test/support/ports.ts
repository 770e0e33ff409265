/** Ports for the servers the tests start, all on loopback. */
import { createServer } from 'node:net';

/**
 * A free TCP port on 127.0.0.1: bound and released at once, so a server started on it afterwards may find it
 * taken (callers that can, retry on another).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

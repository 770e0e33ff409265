/**
 * The server's session id inside the `Mcp-Session-Id` token a forwarding stack (`sdk()`, `proxy()`) gives its
 * client: the token's payload read without verifying it (tests only), through every stack in a chain.
 */
export function serverSessionOf(token: string): string {
  let id = token;
  while (id.startsWith('f1.')) {
    const payload = JSON.parse(Buffer.from(id.split('.')[1]!, 'base64url').toString('utf8')) as { s: string };
    id = payload.s;
  }
  return id;
}

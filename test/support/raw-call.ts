/**
 * A modern (2026-07-28) `tools/call` over plain fetch, with its envelope and standard headers: for tests that
 * read the raw answer (status, headers, SSE events) of a stack in front of another server.
 */
const PV = 'io.modelcontextprotocol/protocolVersion';

export function rawModernToolCall(
  url: string,
  name: string,
  headers: Record<string, string>,
  options: { id?: number | string; signal?: AbortSignal } = {},
): Promise<Response> {
  const body = {
    jsonrpc: '2.0',
    id: options.id ?? 7,
    method: 'tools/call',
    params: {
      name,
      arguments: {},
      _meta: {
        [PV]: '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
      ...headers,
    },
    body: JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

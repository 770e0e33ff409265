import type { ForwardRequest } from '../../core/forward';
import { type Harness, callTool, result, startHarness } from './forward-harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const TOOLS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].map((name) => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: 'object' },
}));

/** A server whose tools/list answers in pages of `per`, with its own cursors (`p1`, `p2`, …). */
function pagedServer(per: number, seen: ForwardRequest[]) {
  return async (r: ForwardRequest): Promise<Response> => {
    seen.push(r);
    const m = r.parsedBody as { id: number; method: string; params?: { cursor?: string; name?: string } };
    if (m.method === 'tools/call')
      return result(m.id, { content: [{ type: 'text', text: `ran ${m.params?.name}` }] });
    const from = m.params?.cursor === undefined ? 0 : Number(m.params.cursor.slice(1));
    const page = TOOLS.slice(from, from + per);
    const next = from + per < TOOLS.length ? { nextCursor: `p${from + per}` } : {};
    return result(m.id, { tools: page, ...next });
  };
}

const list = (id: number, cursor?: string): unknown => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  params: cursor === undefined ? {} : { cursor },
});

describe('the forwarding engine: tool views and lists', () => {
  test('a renamed tool called by its old name is -32602 and send() is never called; by its new name the actual name goes upstream', async () => {
    const seen: ForwardRequest[] = [];
    h = await startHarness(
      pagedServer(10, seen),
      {},
      {
        filter: { allow: ['first', 'beta'], override: { alpha: { name: 'first' } } },
      },
    );
    let res = await h.post(callTool(1, 'alpha'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 1,
      error: { code: -32602, message: 'Unknown tool: "alpha"' },
    });
    expect(seen).toHaveLength(0);
    expect(h.audits[0]).toMatchObject({ outcome: 'error', error_code: -32602 });
    res = await h.post(callTool(2, 'first'), { 'mcp-name': 'first' });
    expect(await res.json()).toMatchObject({ id: 2, result: { content: [{ text: 'ran alpha' }] } });
    expect(seen).toHaveLength(1);
    expect((seen[0]!.parsedBody as { params: { name: string } }).params.name).toBe('alpha');
    expect(JSON.parse(Buffer.from(seen[0]!.body!).toString())).toMatchObject({ params: { name: 'alpha' } });
    expect(seen[0]!.headers.get('mcp-name')).toBe('alpha');
  });

  test('tools/list is renamed and filtered (server pages passed through without pageSize)', async () => {
    const seen: ForwardRequest[] = [];
    h = await startHarness(
      pagedServer(10, seen),
      {},
      {
        filter: { allow: ['first', 'gamma'], override: { alpha: { name: 'first', description: 'renamed' } } },
      },
    );
    const res = await h.post(list(1));
    const body = (await res.json()) as { result: { tools: { name: string; description: string }[] } };
    expect(body.result.tools.map((t) => t.name)).toEqual(['first', 'gamma']);
    expect(body.result.tools[0]!.description).toBe('renamed');
  });

  test('pageSize 2 over 5 upstream tools in 2 upstream pages: 3 pages with mcpware cursors', async () => {
    const seen: ForwardRequest[] = [];
    h = await startHarness(pagedServer(3, seen), { pageSize: 2 });
    const names: string[][] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 4; i++) {
      const res = await h.post(list(i + 1, cursor));
      const body = (await res.json()) as { result: { tools: { name: string }[]; nextCursor?: string } };
      names.push(body.result.tools.map((t) => t.name));
      cursor = body.result.nextCursor;
      if (cursor === undefined) break;
      cursors.push(cursor);
    }
    expect(names).toEqual([['alpha', 'beta'], ['gamma', 'delta'], ['epsilon']]);
    // mcpware's own cursors (lib/cursor.ts), never the server's.
    for (const c of cursors)
      expect(JSON.parse(Buffer.from(c, 'base64url').toString())).toMatchObject({ v: 1, l: 'tools' });
    // Each client page read the server's two pages.
    expect(seen.map((r) => (r.parsedBody as { params: { cursor?: string } }).params.cursor)).toEqual([
      undefined,
      'p3',
      undefined,
      'p3',
      undefined,
      'p3',
    ]);
  });

  test('pageSize: a cursor mcpware did not mint is -32602 and the server is not called', async () => {
    const seen: ForwardRequest[] = [];
    h = await startHarness(pagedServer(3, seen), { pageSize: 2 });
    const res = await h.post(list(1, 'p3'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: 1,
      error: { code: -32602, message: 'tools/list: Invalid cursor: it is malformed' },
    });
    expect(seen).toHaveLength(0);
  });

  test('pageSize with views: the pages hold only what the caller sees', async () => {
    h = await startHarness(
      pagedServer(2, []),
      { pageSize: 2 },
      { filter: { allow: ['alpha', 'delta', 'epsilon'] } },
    );
    const first = (await (await h.post(list(1))).json()) as {
      result: { tools: { name: string }[]; nextCursor: string };
    };
    expect(first.result.tools.map((t) => t.name)).toEqual(['alpha', 'delta']);
    const second = (await (await h.post(list(2, first.result.nextCursor))).json()) as {
      result: { tools: { name: string }[]; nextCursor?: string };
    };
    expect(second.result.tools.map((t) => t.name)).toEqual(['epsilon']);
    expect(second.result.nextCursor).toBeUndefined();
  });
});

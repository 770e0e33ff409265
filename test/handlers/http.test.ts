/**
 * Resources, prompts and completion served through dispatch() over HTTP, on bare node:http and on Express 5,
 * in both protocol eras.
 */
import http from 'node:http';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { checkHeaders } from '../../middleware/check-headers/index';
import { compose } from '../../middleware/compose/index';
import { completion } from '../../handlers/completion/index';
import { dispatch } from '../../middleware/dispatch/index';
import { loadCatalogue } from '../../handlers/catalogue/index';
import { prompts } from '../../handlers/prompts/index';
import { memoryResources, resources } from '../../handlers/resources/index';
import type { Middleware } from '../../core/types';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const CI = 'io.modelcontextprotocol/clientInfo';
const SI = 'io.modelcontextprotocol/serverInfo';
const META = { [PV]: '2026-07-28', [CI]: { name: 't', version: '1' }, [CC]: {} };
const SERVER_INFO = { name: 'services-test', version: '0.0.1' };

type Flavour = 'node:http' | 'express';

async function makeChain(): Promise<Middleware[]> {
  const docs = await loadCatalogue(join(__dirname, '..', '..', 'examples', 'catalogue'));
  const extra = memoryResources(
    Array.from({ length: 5 }, (_, i) => ({ uri: `mem://item/${i}`, name: `item-${i}`, text: `item ${i}` })),
  );
  const res = resources({
    sources: [docs.resources, extra],
    pageSize: 3,
    cache: { ttlMs: 30_000, cacheScope: 'public' },
    templates: [
      {
        uriTemplate: 'greeting://{name}',
        name: 'greeting',
        mimeType: 'text/plain',
        read: (vars) => ({ text: `Hello, ${vars.name}!` }),
        complete: (_v, value) => ['ada', 'alan', 'grace'].filter((n) => n.startsWith(value)),
      },
    ],
  });
  const pr = prompts({ sources: [docs.prompts] });
  return [
    checkHeaders(),
    dispatch({
      anonymous: true,
      serverInfo: SERVER_INFO,
      capabilities: { resources: {}, prompts: {}, completions: {} },
      handlers: { resources: res, prompts: pr, completion: completion({ prompts: pr, resources: res }) },
      logger: { error() {} },
    }),
  ];
}

function serverFor(flavour: Flavour, chain: Middleware[]): http.Server {
  if (flavour === 'node:http') return http.createServer(compose(chain, { logger: { error() {} } }));
  const app = express();
  app.post('/mcp', ...chain);
  return http.createServer(app);
}

describe.each<Flavour>(['node:http', 'express'])('services over HTTP (%s)', (flavour) => {
  let server: http.Server;
  beforeAll(async () => {
    server = serverFor(flavour, await makeChain());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  let nextId = 1;
  /** A modern request (spec.md §8 base request R) for `method` with `params`. */
  function modern(method: string, params: Record<string, unknown> = {}, name?: string) {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
    };
    if (name !== undefined) headers['Mcp-Name'] = name;
    return request(server)
      .post('/mcp')
      .set(headers)
      .send({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: META } });
  }
  /** A legacy (2025-11-25) request: no envelope. */
  function legacy(method: string, params: Record<string, unknown> = {}) {
    return request(server)
      .post('/mcp')
      .set({
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
      })
      .send({ jsonrpc: '2.0', id: nextId++, method, params });
  }

  test('modern resources/list: pages of 3, cache hint and serverInfo on every page, same cacheScope', async () => {
    const uris: string[] = [];
    const scopes = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await modern('resources/list', cursor === undefined ? {} : { cursor });
      expect(r.status).toBe(200);
      const result = r.body.result;
      expect(result.resultType).toBe('complete');
      expect(result.ttlMs).toBe(30_000);
      expect(result._meta[SI]).toEqual(SERVER_INFO);
      scopes.add(result.cacheScope);
      expect(result.resources.length).toBeLessThanOrEqual(3);
      uris.push(...result.resources.map((e: { uri: string }) => e.uri));
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect([...scopes]).toEqual(['public']);
    expect(uris).toEqual([
      'docs://getting-started.md',
      'docs://logo.png',
      'docs://security.md',
      'mem://item/0',
      'mem://item/1',
      'mem://item/2',
      'mem://item/3',
      'mem://item/4',
    ]);
    expect(pages).toBe(3);
  });

  test.each([
    ['garbage', 'not-a-cursor!'],
    ['tampered', Buffer.from('{"v":1,"l":"resources","k":"mem://gone"}').toString('base64url')],
  ])('modern resources/list with a %s cursor → HTTP 200, -32602 in-band, id echoed', async (_l, cursor) => {
    const r = await modern('resources/list', { cursor });
    expect(r.status).toBe(200);
    expect(r.body.error.code).toBe(-32602);
    expect(r.body.id).toBe(nextId - 1);
    expect(r.body.result).toBeUndefined();
  });

  test('modern resources/read: markdown as text, PNG as blob, canonical URI', async () => {
    const md = await modern(
      'resources/read',
      { uri: 'docs://getting-started.md' },
      'docs://getting-started.md',
    );
    expect(md.status).toBe(200);
    expect(md.body.result.contents).toHaveLength(1);
    expect(md.body.result.contents[0]).toMatchObject({
      uri: 'docs://getting-started.md',
      mimeType: 'text/markdown',
    });
    expect(md.body.result.contents[0].text).toMatch(/^# Getting started with mcpware/);
    expect(md.body.result).toMatchObject({ resultType: 'complete', ttlMs: 30_000, cacheScope: 'public' });
    const png = await modern('resources/read', { uri: 'docs://logo.png' }, 'docs://logo.png');
    expect(png.body.result.contents[0].mimeType).toBe('image/png');
    expect(Buffer.from(png.body.result.contents[0].blob, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  test('modern resources/read of an unknown URI → HTTP 200, -32602 with data {uri}, never -32002', async () => {
    const r = await modern('resources/read', { uri: 'docs://nope.md' }, 'docs://nope.md');
    expect(r.status).toBe(200);
    expect(r.body.error).toEqual({
      code: -32602,
      message: 'Unknown resource: docs://nope.md',
      data: { uri: 'docs://nope.md' },
    });
  });

  test('legacy resources/read of an unknown URI → -32002 (the 2025-11-25 code), no modern fields', async () => {
    const r = await legacy('resources/read', { uri: 'docs://nope.md' });
    expect(r.status).toBe(200);
    expect(r.body.error).toMatchObject({ code: -32002, data: { uri: 'docs://nope.md' } });
    const ok = await legacy('resources/read', { uri: 'docs://security.md' });
    expect(ok.body.result.contents[0].text).toMatch(/^# Security model/);
    expect(ok.body.result).not.toHaveProperty('resultType');
    expect(ok.body.result).not.toHaveProperty('ttlMs');
  });

  test('resource templates: list, read through the template', async () => {
    const list = await modern('resources/templates/list');
    expect(list.body.result.resourceTemplates).toEqual([
      { uriTemplate: 'greeting://{name}', name: 'greeting', mimeType: 'text/plain' },
    ]);
    expect(list.body.result).toMatchObject({ ttlMs: 30_000, cacheScope: 'public' });
    const read = await modern('resources/read', { uri: 'greeting://Ada%20L' }, 'greeting://Ada%20L');
    expect(read.body.result.contents).toEqual([
      { uri: 'greeting://Ada%20L', mimeType: 'text/plain', text: 'Hello, Ada L!' },
    ]);
  });

  test('modern prompts/list and prompts/get render the required argument', async () => {
    const list = await modern('prompts/list');
    expect(list.body.result.prompts.map((p: { name: string }) => p.name)).toEqual([
      'explain-error',
      'summarize',
    ]);
    expect(list.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private', ttlMs: 0 });
    const get = await modern(
      'prompts/get',
      { name: 'summarize', arguments: { topic: 'pagination' } },
      'summarize',
    );
    expect(get.status).toBe(200);
    expect(get.body.result.resultType).toBe('complete');
    expect(get.body.result.messages[0].content.text).toMatch(/^Summarize pagination, using/);
    expect(get.body.result).not.toHaveProperty('ttlMs');
  });

  test('prompts/get with a missing required argument → HTTP 200, -32602, in both eras', async () => {
    const m = await modern('prompts/get', { name: 'summarize', arguments: {} }, 'summarize');
    expect([m.status, m.body.error.code]).toEqual([200, -32602]);
    expect(m.body.error.message).toMatch(/"topic"/);
    const l = await legacy('prompts/get', { name: 'summarize' });
    expect([l.status, l.body.error.code]).toEqual([200, -32602]);
  });

  test('unknown prompt → -32602 with data {name}', async () => {
    const r = await modern('prompts/get', { name: 'nope' }, 'nope');
    expect(r.body.error).toEqual({ code: -32602, message: 'Unknown prompt: nope', data: { name: 'nope' } });
  });

  test('completion/complete for a prompt argument and a template variable', async () => {
    const p = await modern('completion/complete', {
      ref: { type: 'ref/prompt', name: 'summarize' },
      argument: { name: 'topic', value: 'x' },
    });
    expect(p.body.result).toMatchObject({ resultType: 'complete', completion: { values: [] } });
    const t = await modern('completion/complete', {
      ref: { type: 'ref/resource', uri: 'greeting://{name}' },
      argument: { name: 'name', value: 'a' },
    });
    expect(t.body.result.completion).toEqual({ values: ['ada', 'alan'] });
  });

  test('legacy prompts/list: plain result', async () => {
    const r = await legacy('prompts/list');
    expect(r.status).toBe(200);
    expect(r.body.result.prompts).toHaveLength(2);
    expect(r.body.result).not.toHaveProperty('resultType');
    expect(r.body.result).not.toHaveProperty('cacheScope');
  });
});

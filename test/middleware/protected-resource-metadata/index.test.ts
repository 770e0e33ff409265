import request from 'supertest';
import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  protectedResourceMetadata,
  protectedResourceMetadataUrl,
} from '../../../middleware/protected-resource-metadata/index';
import type { Middleware } from '../../../core/types';

type Flavour = 'node:http' | 'express';

/** PRM is mounted at the root (well-known URIs live there), in front of a catch-all that answers 299. */
async function serve(flavour: Flavour, mw: Middleware): Promise<{ url: string; close: () => Promise<void> }> {
  const fallthrough = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.statusCode = 299;
    res.end('next');
  };
  let server: http.Server;
  if (flavour === 'node:http')
    server = http.createServer((req, res) => mw(req, res, () => fallthrough(req, res)));
  else {
    const app = express();
    app.use(mw as express.RequestHandler);
    app.use(fallthrough);
    server = http.createServer(app);
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ISSUER = 'https://idp.example.com/realms/acme';

describe.each<Flavour>(['node:http', 'express'])('protectedResourceMetadata on %s', (flavour) => {
  let s: Awaited<ReturnType<typeof serve>>;
  const prm = protectedResourceMetadata({
    resource: 'https://mcp.example.com/mcp',
    authorizationServers: [ISSUER],
    scopesSupported: ['mcp:read', 'mcp:write'],
    resourceName: 'Example MCP',
  });
  const DOC = {
    resource: 'https://mcp.example.com/mcp',
    authorization_servers: [ISSUER],
    bearer_methods_supported: ['header'],
    scopes_supported: ['mcp:read', 'mcp:write'],
    resource_name: 'Example MCP',
  };
  beforeAll(async () => {
    s = await serve(flavour, prm);
  });
  afterAll(() => s.close());

  test.each([
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource/mcp?x=1',
  ])('GET %s → the RFC 9728 document', async (path) => {
    const r = await request(s.url).get(path);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['access-control-allow-origin']).toBe('*');
    expect(r.body).toEqual(DOC);
  });

  test('HEAD → headers only; POST → 405', async () => {
    const head = await request(s.url).head('/.well-known/oauth-protected-resource/mcp');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(JSON.stringify(DOC).length));
    const post = await request(s.url).post('/.well-known/oauth-protected-resource');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  test.each([
    '/mcp',
    '/.well-known/oauth-protected-resource/other',
    '/.well-known/oauth-protected-resource/mcp/',
    '/.well-known/openid-configuration',
  ])('%s goes to next()', async (path) => {
    expect((await request(s.url).get(path)).status).toBe(299);
  });

  test('the advertised URL is the path-inserted form', () => {
    expect(prm.url).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(prm.paths).toEqual([
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
    ]);
  });
});

describe('protectedResourceMetadata without an authorization server', () => {
  test.each<[string, string[] | undefined]>([
    ['absent', undefined],
    ['empty', []],
  ])('%s list → 404 with an empty body on both paths (no OAuth offered)', async (_n, servers) => {
    const prm = protectedResourceMetadata({
      resource: 'http://localhost:3000/mcp',
      authorizationServers: servers,
    });
    expect(prm.document).toBeUndefined();
    const s = await serve('node:http', prm);
    try {
      for (const p of [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-protected-resource/mcp',
      ]) {
        const r = await request(s.url).get(p);
        expect(r.status).toBe(404);
        expect(r.text).toBe('');
      }
    } finally {
      await s.close();
    }
  });
});

describe('protectedResourceMetadata options', () => {
  test('a resource at the origin has only the root form', () => {
    const prm = protectedResourceMetadata({
      resource: 'https://mcp.example.com/',
      authorizationServers: [ISSUER],
    });
    expect(prm.paths).toEqual(['/.well-known/oauth-protected-resource']);
    expect(prm.url).toBe('https://mcp.example.com/.well-known/oauth-protected-resource');
    expect(prm.document?.resource).toBe('https://mcp.example.com/');
  });

  test('protectedResourceMetadataUrl', () => {
    expect(protectedResourceMetadataUrl('https://MCP.example.com/public/mcp')).toBe(
      'https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp',
    );
    expect(() => protectedResourceMetadataUrl('mcp')).toThrow(TypeError);
  });

  test.each<[string, Record<string, unknown>, RegExp]>([
    ['no resource', {}, /"resource"/],
    ['a relative resource', { resource: '/mcp' }, /"resource"/],
    ['a resource with a fragment', { resource: 'https://x/mcp#a' }, /"resource"/],
    ['a resource with a quote', { resource: 'https://x/m"cp' }, /"resource"/],
    [
      'a bad server list',
      { resource: 'https://x/mcp', authorizationServers: 'https://idp' },
      /authorizationServers/,
    ],
    ['a scope with a space', { resource: 'https://x/mcp', scopesSupported: ['a b'] }, /scopesSupported/],
    [
      'a typo',
      { resource: 'https://x/mcp', authorizationServer: [ISSUER] },
      /unknown option "authorizationServer"/,
    ],
  ])('%s throws', (_n, opts, msg) => {
    expect(() => protectedResourceMetadata(opts as never)).toThrow(msg);
  });

  test('a misspelt option is refused naming the right one', () => {
    expect(() =>
      protectedResourceMetadata({ resource: 'https://x/mcp', authorizationServer: [ISSUER] } as never),
    ).toThrow(
      /protectedResourceMetadata: unknown option "authorizationServer"; did you mean "authorizationServers"\?/,
    );
    expect(() =>
      protectedResourceMetadata({ resource: 'https://x/mcp', scopeSupported: [] } as never),
    ).toThrow(/did you mean "scopesSupported"\?/);
  });
});

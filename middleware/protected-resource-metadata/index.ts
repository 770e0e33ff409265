/**
 * @module mcpware/protected-resource-metadata: `protectedResourceMetadata({ resource, authorizationServers })`
 * serves the RFC 9728 document an MCP client fetches after a 401 to find where to get a token.
 *
 * It answers the root form `/.well-known/oauth-protected-resource` and the path-inserted form for the
 * resource's path (`/.well-known/oauth-protected-resource/mcp` for `https://host/mcp`), on `GET` and `HEAD`;
 * other methods on those paths get 405, every other path goes to `next()`. With no authorization server both
 * paths answer 404, never a document with an empty list: the document says "this resource is protected by
 * OAuth", and a client that believes it starts OAuth against a server that wants none.
 *
 * @see docs/middleware/protected-resource-metadata.md
 *
 * @example
 * const prm = protectedResourceMetadata({ resource: 'https://mcp.example.com/mcp', authorizationServers: [issuer] });
 * app.use(prm);
 * app.use('/mcp', oidcAuth({ issuer, audience: 'https://mcp.example.com/mcp', resourceMetadataUrl: prm.url }));
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { scopeList } from '../auth/challenge.js';
import { badOption, knownKeys, optionsObject, stringOption } from '../../core/options.js';
import type { Middleware } from '../../core/types.js';

export const PRM_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface ProtectedResourceMetadataOptions {
  /** This server's resource identifier: the MCP endpoint's URL, e.g. `https://mcp.example.com/mcp`. Required. */
  resource: string;
  /** Issuer URLs of the authorization servers. Empty or absent → 404 (no OAuth offered). */
  authorizationServers?: readonly string[];
  /** `scopes_supported`. Omitted when absent. Do not list `offline_access` (MCP 2026-07-28). */
  scopesSupported?: readonly string[];
  /** `resource_name`: a human-readable name. */
  resourceName?: string;
  /** `resource_documentation`: a URL of documentation for developers. */
  resourceDocumentation?: string;
}

/** The RFC 9728 document as served. */
export interface ProtectedResourceMetadataDocument {
  resource: string;
  authorization_servers: string[];
  bearer_methods_supported: ['header'];
  scopes_supported?: string[];
  resource_name?: string;
  resource_documentation?: string;
}

export interface ProtectedResourceMetadataMiddleware extends Middleware {
  /** The metadata URL to advertise in `WWW-Authenticate: Bearer resource_metadata="…"` (path-inserted form). */
  readonly url: string;
  /** The paths answered. */
  readonly paths: readonly string[];
  /** The document, or `undefined` when no authorization server is configured (404). */
  readonly document: Readonly<ProtectedResourceMetadataDocument> | undefined;
}

function httpUrl(v: unknown): URL | undefined {
  if (typeof v !== 'string' || v.length > 2000) return undefined;
  try {
    const u = new URL(v);
    if (
      (u.protocol !== 'https:' && u.protocol !== 'http:') ||
      u.hash !== '' ||
      u.username !== '' ||
      u.password !== ''
    )
      return undefined;
    // No quotes, backslashes or whitespace: the URL travels inside a WWW-Authenticate quoted-string.
    if (/["\\\s]/.test(v)) return undefined;
    return u;
  } catch {
    return undefined;
  }
}

/** The resource's path with no trailing slash (`''` for the origin itself). */
function resourcePath(u: URL): string {
  let p = u.pathname;
  while (p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

/**
 * The RFC 9728 metadata URL for a resource: the well-known path inserted between the origin and the
 * resource's path (`https://host/mcp` → `https://host/.well-known/oauth-protected-resource/mcp`).
 * @example
 * ```ts
 * import { protectedResourceMetadataUrl } from 'mcpware/protected-resource-metadata';
 *
 * // 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
 * console.log(protectedResourceMetadataUrl('https://mcp.example.com/mcp'));
 * ```
 */
export function protectedResourceMetadataUrl(resource: string): string {
  const u = httpUrl(resource);
  if (!u)
    throw new TypeError(
      `protectedResourceMetadataUrl: resource must be an absolute http(s) URL without fragment, got ${JSON.stringify(resource)}`,
    );
  return `${u.origin}${PRM_WELL_KNOWN}${resourcePath(u)}`;
}

/** The request's path without query, as the client sent it (Express's `originalUrl` when mounted under a path). */
function pathOf(req: IncomingMessage): string {
  const raw = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}

const FACTORY = 'protectedResourceMetadata';
const KNOWN = [
  'resource',
  'authorizationServers',
  'scopesSupported',
  'resourceName',
  'resourceDocumentation',
];

/**
 * Serve the protected-resource metadata document.
 * @param options - {@link ProtectedResourceMetadataOptions}
 * @see docs/middleware/protected-resource-metadata.md
 * @example
 * ```ts
 * import { oidcAuth } from 'mcpware/oidc-auth';
 * import { protectedResourceMetadata } from 'mcpware/protected-resource-metadata';
 *
 * const resource = 'https://mcp.example.com/mcp';
 * const issuer = 'https://idp.example.com/realms/acme';
 * const prm = protectedResourceMetadata({ resource, authorizationServers: [issuer] });
 * app.use(prm); // at the application root: well-known URIs live there
 * app.use('/mcp', oidcAuth({ issuer, audience: resource, resourceMetadataUrl: prm.url }));
 * ```
 */
export function protectedResourceMetadata(
  options: ProtectedResourceMetadataOptions,
): ProtectedResourceMetadataMiddleware {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, KNOWN);
  const ru = httpUrl(o.resource);
  if (!ru) throw badOption(FACTORY, 'resource', o.resource, 'an absolute http(s) URL without fragment');
  const servers = o.authorizationServers ?? [];
  if (!Array.isArray(servers) || !servers.every((s) => httpUrl(s) !== undefined)) {
    throw badOption(
      FACTORY,
      'authorizationServers',
      o.authorizationServers,
      'an array of http(s) issuer URLs',
    );
  }
  const scopes =
    o.scopesSupported === undefined ? undefined : scopeList(FACTORY, 'scopesSupported', o.scopesSupported);
  const resourceName = stringOption(FACTORY, 'resourceName', o.resourceName, undefined);
  if (o.resourceDocumentation !== undefined && !httpUrl(o.resourceDocumentation)) {
    throw badOption(FACTORY, 'resourceDocumentation', o.resourceDocumentation, 'an http(s) URL');
  }

  let document: ProtectedResourceMetadataDocument | undefined;
  let body: string | undefined;
  if (servers.length > 0) {
    // `resource` is served verbatim: RFC 9728 §3.3 has the client compare it with the URL it used.
    document = {
      resource: o.resource,
      authorization_servers: [...servers],
      bearer_methods_supported: ['header'],
    };
    if (scopes) document.scopes_supported = scopes;
    if (resourceName !== undefined) document.resource_name = resourceName;
    if (o.resourceDocumentation !== undefined) document.resource_documentation = o.resourceDocumentation;
    body = JSON.stringify(document);
    Object.freeze(document);
  }
  const sub = resourcePath(ru);
  const paths = sub === '' ? [PRM_WELL_KNOWN] : [PRM_WELL_KNOWN, PRM_WELL_KNOWN + sub];
  const url = `${ru.origin}${PRM_WELL_KNOWN}${sub}`;

  const mw = function protectedResourceMetadataHandler(
    req: IncomingMessage,
    res: ServerResponse,
    next: (err?: unknown) => void,
  ): void {
    if (!paths.includes(pathOf(req))) {
      next();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    if (body === undefined) {
      res.statusCode = 404;
      res.setHeader('Content-Length', '0');
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    // A public document that browser-based clients (MCP Inspector...) must be able to read.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.end(req.method === 'HEAD' ? undefined : body);
  };
  return Object.assign(mw, { url, paths: Object.freeze(paths), document });
}

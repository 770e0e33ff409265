/**
 * oidcAuth: options refused at construction.
 */
import { oidcAuth } from '../../../middleware/oidc-auth/index';

const AUD = 'https://mcp.test/mcp';

describe('oidcAuth options', () => {
  const issuer = 'https://idp.example.com/realms/x';
  // These constructions fail before any fetch: nothing is started.
  test.each<[string, Record<string, unknown>, RegExp]>([
    ['no issuer', { audience: AUD }, /"issuer"/],
    ['a plain-http issuer off loopback', { issuer: 'http://idp.example.com', audience: AUD }, /"issuer"/],
    ['an issuer with a query', { issuer: issuer + '?x=1', audience: AUD }, /"issuer"/],
    ['neither audience nor clientId', { issuer }, /"audience".*"clientId"/],
    ['alg none', { issuer, audience: AUD, algorithms: ['RS256', 'none'] }, /asymmetric algorithms only/],
    ['HS256', { issuer, audience: AUD, algorithms: ['HS256'] }, /asymmetric algorithms only/],
    ['an unknown algorithm', { issuer, audience: AUD, algorithms: ['RS257'] }, /drawn from/],
    ['a bad clockTolerance', { issuer, audience: AUD, clockTolerance: -1 }, /clockTolerance/],
    ['a bad timeout', { issuer, audience: AUD, fetchTimeoutMs: 1.5 }, /fetchTimeoutMs/],
    ['a typo', { issuer, audience: AUD, requiredRole: ['x'] }, /unknown option "requiredRole"/],
    ['a bad retry', { issuer, audience: AUD, retry: { attemps: 3 } }, /unknown option "attemps"/],
    ['bad requiredRoles', { issuer, audience: AUD, requiredRoles: 'admin' }, /requiredRoles/],
    ['a bad logger', { issuer, audience: AUD, logger: {} }, /logger/],
  ])('%s throws a TypeError', (_n, opts, msg) => {
    expect(() => oidcAuth(opts as never)).toThrow(TypeError);
    expect(() => oidcAuth(opts as never)).toThrow(msg);
  });

  test.each<[string, Record<string, unknown>, RegExp]>([
    ['requiredRole', { issuer, audience: AUD, requiredRole: ['x'] }, /did you mean "requiredRoles"\?/],
    ['jwksCacheMaxAge', { issuer, audience: AUD, jwksCacheMaxAge: 1 }, /did you mean "jwksCacheMaxAgeMs"\?/],
    [
      'resourceMetadataURL',
      { issuer, audience: AUD, resourceMetadataURL: 'x' },
      /did you mean "resourceMetadataUrl"\?/,
    ],
    [
      'retry.attemps',
      { issuer, audience: AUD, retry: { attemps: 3 } },
      /oidcAuth: retry: .*did you mean "attempts"\?/,
    ],
  ])('a misspelt option (%s) is refused naming the right one', (_n, opts, msg) => {
    expect(() => oidcAuth(opts as never)).toThrow(TypeError);
    expect(() => oidcAuth(opts as never)).toThrow(msg);
  });
});

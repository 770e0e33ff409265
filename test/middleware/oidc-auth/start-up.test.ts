/**
 * oidcAuth: start-up against an issuer that is down, slow, wrong or closed early.
 */
import request from 'supertest';
import { McpwareError } from '../../../lib/errors';
import { OidcAuthError, oidcAuth } from '../../../middleware/oidc-auth/index';
import { TestIssuer } from '../../../testing/index';
import { PING, bearer, memoryLogger, serve } from '../../support/auth-harness';

const AUD = 'https://mcp.test/mcp';

describe('oidcAuth: issuer down at start-up', () => {
  let idp: TestIssuer;
  beforeEach(async () => {
    idp = await TestIssuer.start();
  });
  afterEach(() => idp.stop());

  test('unreachable: ready rejects naming the issuer, the error is logged, tokens get 503', async () => {
    await idp.down('refuse');
    const logger = memoryLogger();
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger });
    await expect(mw.ready).rejects.toThrow(
      new RegExp(
        `cannot start for issuer ${idp.url}: discovery at .* failed: fetch failed \\(ECONNREFUSED\\)`,
      ),
    );
    expect(mw.status().phase).toBe('failed');
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.message)).toEqual([
      expect.stringContaining('start-up failed for issuer'),
    ]);
    const h = await serve('express', mw);
    try {
      const r = await request(h.url)
        .post('/mcp')
        .set(...bearer(await idp.sign({ sub: 'u', aud: AUD })))
        .send(PING);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({
        jsonrpc: '2.0',
        error: { code: 503, message: 'Authentication is temporarily unavailable' },
      });
      expect(r.headers['retry-after']).toBe('5');
      expect(h.seen[0]!.auth).toEqual({ outcome: 'unavailable', method: 'oidc' });
    } finally {
      await h.close();
    }
  });

  test('a failed start-up nobody awaits is not an unhandled rejection', async () => {
    await idp.down('refuse');
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
      // Wait for the failure without attaching a handler to mw.ready itself.
      while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setImmediate(r));
      expect(mw.status().phase).toBe('failed');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('an issuer that accepts and never answers: start-up times out', async () => {
    await idp.down('hang');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, fetchTimeoutMs: 200, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/discovery at .* failed: timed out/);
  });

  test('an issuer answering 503: start-up fails with the status', async () => {
    await idp.down('error');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/answered HTTP 503/);
  });

  test('with retry: requests get 503 while it is down, then it starts when the issuer comes back', async () => {
    await idp.down('refuse');
    const logger = memoryLogger();
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      retry: { minDelayMs: 20, maxDelayMs: 50 },
      logger,
    });
    try {
      while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
      expect(mw.status().phase).toBe('retrying');
      const token = await idp.sign({ sub: 'u', aud: AUD });
      expect(await mw.check(token, {} as never)).toMatchObject({ kind: 'refuse', outcome: 'unavailable' });
      await idp.up();
      await mw.ready;
      expect(mw.status()).toMatchObject({ phase: 'ready', jwksUri: idp.jwksUri });
      expect((await mw.check(token, {} as never)).kind).toBe('ok');
      expect(logger.entries.some((e) => e.level === 'error' && /attempt 1 failed/.test(e.message))).toBe(
        true,
      );
    } finally {
      mw.close();
    }
  });

  test('with retry attempts exhausted, ready rejects', async () => {
    await idp.down('error');
    const mw = oidcAuth({
      issuer: idp.url,
      audience: AUD,
      retry: { attempts: 2, minDelayMs: 1 },
      logger: memoryLogger(),
    });
    await expect(mw.ready).rejects.toThrow(/cannot start/);
    expect(idp.stats.discovery).toBe(0);
  });

  test('close() stops the retries and rejects ready', async () => {
    await idp.down('refuse');
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, retry: true, logger: memoryLogger() });
    while (mw.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
    mw.close();
    await expect(mw.ready).rejects.toThrow(/closed/);
    expect(mw.status().phase).toBe('closed');
  });

  test('start-up errors carry a code: failed for good, with the attempt as the cause, or closed', async () => {
    await idp.down('refuse');
    const failed = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    const err = await failed.ready.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OidcAuthError);
    expect(err).toBeInstanceOf(McpwareError);
    expect(err).toMatchObject({ name: 'OidcAuthError' });
    expect(err).toMatchObject({ code: 'ERR_OIDC_START_FAILED', cause: { code: 'ERR_OIDC_DISCOVERY' } });

    const closed = oidcAuth({ issuer: idp.url, audience: AUD, retry: true, logger: memoryLogger() });
    while (closed.status().phase === 'starting') await new Promise((r) => setTimeout(r, 10));
    closed.close();
    await expect(closed.ready).rejects.toMatchObject({ code: 'ERR_OIDC_CLOSED' });
  });

  test('a request that arrives during start-up waits for it', async () => {
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    const d = await mw.check(await idp.sign({ sub: 'u', aud: AUD }), {} as never);
    expect(d.kind).toBe('ok');
  });

  test('a discovery document naming another issuer fails start-up', async () => {
    const bad = await TestIssuer.start({ discovery: { issuer: 'https://impostor.test' } });
    try {
      const mw = oidcAuth({ issuer: bad.url, audience: AUD, logger: memoryLogger() });
      await expect(mw.ready).rejects.toThrow(/names issuer "https:\/\/impostor\.test", expected/);
    } finally {
      await bad.stop();
    }
  });

  test('a plain-http jwks_uri off loopback fails start-up', async () => {
    const bad = await TestIssuer.start({ discovery: { jwks_uri: 'http://keys.example.com/jwks' } });
    try {
      const mw = oidcAuth({ issuer: bad.url, audience: AUD, logger: memoryLogger() });
      await expect(mw.ready).rejects.toThrow(/no usable jwks_uri/);
    } finally {
      await bad.stop();
    }
  });

  test('an empty key set fails start-up', async () => {
    idp.retire(idp.currentKid('RS256'));
    idp.retire(idp.currentKid('ES256'));
    const mw = oidcAuth({ issuer: idp.url, audience: AUD, logger: memoryLogger() });
    await expect(mw.ready).rejects.toThrow(/holds no keys/);
    await expect(mw.ready).rejects.toMatchObject({ cause: { code: 'ERR_OIDC_JWKS' } });
  });
});

/**
 * The authentication decision on the request's trace (core/trace.ts): every decision of an auth middleware (the
 * chain's `ok`, each refusal, two `Authorization` lines) is the event `mcpware.auth` with its outcome and, when an
 * authenticator decided, its method. Over HTTP, with a real API key chain and a real OIDC issuer.
 */
import http from 'node:http';
import request from 'supertest';
import { hashKey } from '../../../lib/apikeys';
import { apiKeyAuth } from '../../../middleware/api-key-auth/index';
import { authenticate } from '../../../middleware/auth/index';
import { oidcAuth } from '../../../middleware/oidc-auth/index';
import type { Middleware } from '../../../core/types';
import { TestIssuer } from '../../../testing/index';
import { type Harness, PING, memoryLogger, serve } from '../../support/auth-harness';
import { type HandTracing, handTracing } from '../../support/otel-hand-trace';

const AUD = 'https://mcp.test/mcp';
const KEY = 'ci-key-0123456789abcdef0123';

let tracing: HandTracing;
let idp: TestIssuer;
let h: Harness;
let plain: Harness;

beforeAll(async () => {
  tracing = handTracing();
  idp = await TestIssuer.start();
  const logger = memoryLogger();
  const chain = authenticate(
    [
      apiKeyAuth({ keys: [{ userId: 'ci', hash: hashKey(KEY), groups: ['ci'] }], logger }),
      oidcAuth({ issuer: idp.url, audience: AUD, logger }),
    ],
    { logger },
  );
  await chain.ready;
  const traced: Middleware = (req, res, next) => tracing.middleware(req, res, () => chain(req, res, next));
  [h, plain] = await Promise.all([serve('node:http', traced), serve('node:http', chain)]);
});

afterAll(async () => {
  await Promise.all([h?.close(), plain?.close(), idp?.stop()]);
  await tracing.close();
});

/** Post a ping with these Authorization lines (one line each); the trace's events of that request. */
async function eventsFor(...authorization: string[]): Promise<unknown[]> {
  const n = tracing.logs.length;
  const body = JSON.stringify(PING);
  const headers: http.OutgoingHttpHeaders = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };
  if (authorization.length > 0) headers.Authorization = authorization;
  await new Promise<void>((resolve, reject) => {
    const req = http.request(`${h.url}/mcp`, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end(body);
  });
  expect(tracing.logs.length).toBe(n + 1);
  return tracing.logs[n]!.events;
}

type Credential = () => string | undefined | Promise<string>;
const CASES: [string, Credential, Record<string, string>][] = [
  ['an API key', (): string => `Bearer ${KEY}`, { outcome: 'ok', method: 'api-key' }],
  [
    'an OIDC token',
    (): Promise<string> => idp.sign({ sub: 'alice', aud: AUD }).then((t) => `Bearer ${t}`),
    { outcome: 'ok', method: 'oidc' },
  ],
  [
    'an expired OIDC token',
    (): Promise<string> =>
      idp.sign({ sub: 'alice', aud: AUD }, { expiresIn: -60 }).then((t) => `Bearer ${t}`),
    { outcome: 'expired', method: 'oidc' },
  ],
  ['no credential', (): undefined => undefined, { outcome: 'missing' }],
  ['a credential no member knows', (): string => 'Bearer not-a-known-key', { outcome: 'invalid' }],
];

test.each(CASES)('%s: one mcpware.auth event with the decision', async (_what, credential, decision) => {
  const a = await credential();
  const events = await (a === undefined ? eventsFor() : eventsFor(a));
  expect(events).toEqual([{ name: 'mcpware.auth', attributes: decision }]);
  expect(h.seen.at(-1)!.auth).toEqual(decision);
});

test('two Authorization lines: the invalid decision is an event too', async () => {
  const events = await eventsFor(`Bearer ${KEY}`, `Bearer ${KEY}`);
  expect(events).toEqual([{ name: 'mcpware.auth', attributes: { outcome: 'invalid' } }]);
});

test('without a trace, the decision is on req.locals.auth only', async () => {
  const n = tracing.logs.length;
  const r = await request(plain.url).post('/mcp').set('Authorization', `Bearer ${KEY}`).send(PING);
  expect(r.status).toBe(200);
  expect(plain.seen.at(-1)!.auth).toEqual({ outcome: 'ok', method: 'api-key' });
  expect(tracing.logs.length).toBe(n);
});

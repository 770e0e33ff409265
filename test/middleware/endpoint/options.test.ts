/**
 * mcpEndpoint()'s options are checked when it is called: the top level and the auth section by the endpoint
 * (with the closest known name), every other section by the factory it goes to, which names the option. No
 * authentication is refused unless asked for by name, so a missing or misspelt section never means "no
 * protection".
 */
import { Registry } from 'prom-client';
import request from 'supertest';
import { hashKey } from '../../../middleware/api-key-auth/index';
import { mcpEndpoint, type McpEndpointOptions } from '../../../middleware/endpoint/index';
import { jsonLogger } from '../../support/json-logger';

const keys = [{ userId: 'ci', hash: hashKey('options-key-0123456789'), groups: ['bots'] }];
const quiet = { error() {}, warn() {} };
const base = (): McpEndpointOptions => ({
  auth: { apiKeys: keys },
  handlers: {},
  dispatch: { serverInfo: { name: 't', version: '1' } },
  logger: quiet,
});
const withOptions = (patch: Record<string, unknown>) => () =>
  mcpEndpoint({ ...base(), ...patch } as McpEndpointOptions);

describe('mcpEndpoint(): who may call', () => {
  test.each<[string, Record<string, unknown>]>([
    ['no auth section', { auth: undefined }],
    ['an empty auth section', { auth: {} }],
    ['auth: { insecureNoAuth: false }', { auth: { insecureNoAuth: false } }],
  ])('%s is refused, naming insecureNoAuth as the way to ask for it', (_name, patch) => {
    expect(withOptions(patch)).toThrow(/^mcpEndpoint: option "auth" is required: .*insecureNoAuth: true/);
  });

  test('a misspelt auth section name is refused with the closest name', () => {
    expect(withOptions({ auth: { apikeys: keys } })).toThrow(
      'mcpEndpoint: unknown option auth."apikeys"; did you mean "apiKeys"?',
    );
  });

  test('an empty key list is refused by apiKeyAuth()', () => {
    expect(withOptions({ auth: { apiKeys: [] } })).toThrow(/^apiKeyAuth: option "keys" is an empty list/);
  });

  test('insecureNoAuth with keys configured is refused', () => {
    expect(withOptions({ auth: { apiKeys: keys, insecureNoAuth: true } })).toThrow(
      /^mcpEndpoint: option "auth.insecureNoAuth"/,
    );
  });

  test('insecureNoAuth: true builds the endpoint and says so once at warn', () => {
    const log = jsonLogger();
    mcpEndpoint({ ...base(), auth: { insecureNoAuth: true }, logger: log.logger });
    const lines = log.records('mcpEndpoint:');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn' });
    expect(lines[0]!.message).toMatch(/no authentication/);
  });

  test('apiKeyAuth() options are taken as they are', () => {
    expect(withOptions({ auth: { apiKeys: { keys, allowKeysWithoutGroups: true, kyes: [] } } })).toThrow(
      'apiKeyAuth: unknown option "kyes"; did you mean "keys"?',
    );
  });
});

describe('mcpEndpoint(): sections', () => {
  test.each<[string, Record<string, unknown>, string | RegExp]>([
    ['a misspelt section', { limit: {} }, 'mcpEndpoint: unknown option "limit"; did you mean "limits"?'],
    ['limits by limits()', { limits: { perUserRPM: 5 } }, /^limits: unknown option "perUserRPM"/],
    [
      'origin by guardOrigin()',
      { origin: { allowedHost: [] } },
      /^guardOrigin: unknown option "allowedHost"/,
    ],
    ['redact by redact()', { redact: { rule: [] } }, /^redact: unknown option "rule"/],
    ['metrics by metrics()', { metrics: { prefx: 'x_' } }, /^metrics: unknown option "prefx"/],
    [
      'body by parse()',
      { body: { limit: 'lots' } },
      /^rejectBatch: option "limit" must be a positive byte count/,
    ],
    [
      'dispatch by dispatch()',
      { dispatch: { serverInfo: { name: 't', version: '1' }, instruction: 'x' } },
      /^dispatch: unknown option "instruction"; did you mean "instructions"/,
    ],
    ['a section that is not an object', { limits: 600 }, /^mcpEndpoint: option "limits" must be an object/],
    ['no dispatch section', { dispatch: undefined }, /^mcpEndpoint: option "dispatch" is required/],
    ['no handlers', { handlers: undefined }, /^mcpEndpoint: option "handlers" is required/],
    [
      'handlers inside dispatch',
      { dispatch: { serverInfo: { name: 't', version: '1' }, handlers: {} } },
      'mcpEndpoint: option dispatch."handlers" belongs at handlers',
    ],
    [
      'the body limit inside dispatch',
      { dispatch: { serverInfo: { name: 't', version: '1' }, limit: '1mb' } },
      'mcpEndpoint: option dispatch."limit" belongs at body.limit',
    ],
    [
      'the body group inside dispatch',
      { dispatch: { serverInfo: { name: 't', version: '1' }, body: { limit: '1mb' } } },
      'mcpEndpoint: option dispatch."body" belongs at body (see docs/middleware/endpoint.md#options)',
    ],
    [
      'a flat dispatch option of the first layout',
      { dispatch: { serverInfo: { name: 't', version: '1' }, maxListenStreams: 3 } },
      /^dispatch: option "maxListenStreams" belongs at streams.maxListenStreams/,
    ],
    [
      'a misspelt name in a dispatch group',
      { dispatch: { serverInfo: { name: 't', version: '1' }, streams: { keepAlive: 0 } } },
      /^dispatch: unknown option streams."keepAlive"; did you mean "keepAliveMs"/,
    ],
    [
      'a registry with metrics off',
      { registry: new Registry(), metrics: false },
      /^mcpEndpoint: option "metrics" must be left out when registry is given/,
    ],
    [
      'two registries',
      { registry: new Registry(), metrics: { registry: new Registry() } },
      /both given; give one/,
    ],
    [
      'limits hooks by limits()',
      { limits: { hooks: { onDenid() {} } } },
      /^limits: unknown option hooks."onDenid"/,
    ],
  ])('%s is refused', (_name, patch, message) => {
    expect(withOptions(patch)).toThrow(message);
  });

  test('limits: false and redact: false leave those parts out', () => {
    const e = mcpEndpoint({ ...base(), limits: false, redact: false });
    expect(e.parts.limits).toBeUndefined();
    expect(e.parts.redact).toBeUndefined();
    expect(e.stats().limits).toBeUndefined();
  });

  test('by default: limits and redaction on, metrics and audit off', () => {
    const e = mcpEndpoint(base());
    expect(typeof e.parts.limits?.stats).toBe('function');
    expect(typeof e.parts.redact?.redactor).toBe('object');
    expect(e.parts.metrics).toBeUndefined();
    expect(e.metricsHandler).toBeUndefined();
    expect(e.parts.audit).toBeUndefined();
  });
});

describe('mcpEndpoint(): the dispatch groups reach every part', () => {
  test('dispatch.versions configure classifyRevision() too: a revision left out is refused 400 / -32602', async () => {
    const endpoint = mcpEndpoint({
      ...base(),
      auth: { insecureNoAuth: true },
      dispatch: { serverInfo: { name: 't', version: '1' }, versions: { legacyVersions: ['2025-11-25'] } },
    });
    const post = (version: string) =>
      request(endpoint)
        .post('/')
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream')
        .set('MCP-Protocol-Version', version)
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const refused = await post('2025-06-18');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      id: 1,
      error: { code: -32602, data: { supported: ['2025-11-25'], requested: '2025-06-18' } },
    });
    const served = await post('2025-11-25');
    expect(served.status).toBe(200);
  });

  test("the codes of the endpoint's own refusals", () => {
    const codeOf = (patch: Record<string, unknown>): unknown => {
      try {
        withOptions(patch)();
      } catch (e) {
        return (e as { code?: unknown }).code;
      }
      return undefined;
    };
    expect(codeOf({ handlers: undefined })).toBe('ERR_MCPWARE_MISSING_OPTION');
    expect(codeOf({ auth: {} })).toBe('ERR_MCPWARE_MISSING_OPTION');
    expect(codeOf({ dispatch: { serverInfo: { name: 't', version: '1' }, logger: quiet } })).toBe(
      'ERR_MCPWARE_MOVED_OPTION',
    );
    expect(codeOf({ registry: new Registry(), metrics: { registry: new Registry() } })).toBe(
      'ERR_MCPWARE_INVALID_OPTION',
    );
  });
});

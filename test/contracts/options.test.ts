/**
 * Every factory refuses an unknown option when it is called, with a TypeError that names the factory, the
 * option and the closest known name: a misspelt option can never switch a check off. Each row gives the factory
 * its required options plus one misspelt name. The error carries the code ERR_MCPWARE_UNKNOWN_OPTION and ends
 * with the docs page and anchor of that factory's option table, and the page has that heading.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPTION_ERRORS, documentedFactories, optionDocs } from '../../core/options';
import { ChangeFeed, redisChangeFeed } from '../../handlers/changes/index';
import { loadCatalogue } from '../../handlers/catalogue/index';
import { completion } from '../../handlers/completion/index';
import { prompts } from '../../handlers/prompts/index';
import { resources } from '../../handlers/resources/index';
import { ToolRegistry } from '../../handlers/tools/index';
import { apiKeyAuth } from '../../middleware/api-key-auth/index';
import { audit } from '../../middleware/audit/index';
import { authenticate } from '../../middleware/auth/index';
import { checkHeaders } from '../../middleware/check-headers/index';
import { classifyRevision } from '../../middleware/classify-revision/index';
import { compose } from '../../middleware/compose/index';
import { dispatch } from '../../middleware/dispatch/index';
import { mcpEndpoint } from '../../middleware/endpoint/index';
import { guardOrigin } from '../../middleware/guard-origin/index';
import { limits } from '../../middleware/limits/index';
import { methodGuard } from '../../middleware/method-guard/index';
import { metrics } from '../../middleware/metrics/index';
import { oidcAuth } from '../../middleware/oidc-auth/index';
import { parse } from '../../middleware/parse/index';
import { protectedResourceMetadata } from '../../middleware/protected-resource-metadata/index';
import { redact } from '../../middleware/redact/index';
import { rejectBatch } from '../../middleware/reject-batch/index';
import { toolFilter } from '../../middleware/tool-filter/index';
import { Registry } from 'prom-client';
import { anchorsOf } from '../../scripts/md-anchors.cjs';

const key = { userId: 'u', hash: 'sha256:' + 'a'.repeat(64), groups: ['g'] };
const serverInfo = { name: 't', version: '1' };

// [factory, misspelt option, the name it must suggest, the call]
const rows: [string, string, string, () => unknown][] = [
  ['parse', 'limt', 'limit', () => parse({ limt: '1mb' } as never)],
  ['rejectBatch', 'loger', 'logger', () => rejectBatch({ loger: console } as never)],
  ['guardOrigin', 'allowedHost', 'allowedHosts', () => guardOrigin({ allowedHost: ['x'] } as never)],
  ['methodGuard', 'allowOption', 'allowOptions', () => methodGuard({ allowOption: true } as never)],
  [
    'classifyRevision',
    'modernVersion',
    'modernVersions',
    () => classifyRevision({ modernVersion: [] } as never),
  ],
  ['checkHeaders', 'paramheaders', 'paramHeaders', () => checkHeaders({ paramheaders: false } as never)],
  ['compose', 'loger', 'logger', () => compose([], { loger: console } as never)],
  [
    'authenticate',
    'resourceMetadataURL',
    'resourceMetadataUrl',
    () => authenticate([apiKeyAuth({ keys: [key] })], { resourceMetadataURL: 'x' } as never),
  ],
  ['apiKeyAuth', 'key', 'keys', () => apiKeyAuth({ keys: [key], key: [] } as never)],
  [
    'oidcAuth',
    'audiences',
    'audience',
    () => oidcAuth({ issuer: 'http://127.0.0.1:1', audience: 'a', audiences: ['a'] } as never),
  ],
  [
    'protectedResourceMetadata',
    'authorizationServer',
    'authorizationServers',
    () => protectedResourceMetadata({ resource: 'http://127.0.0.1/mcp', authorizationServer: [] } as never),
  ],
  ['limits', 'perUserRPM', 'perUserRpm', () => limits({ perUserRPM: 5 } as never)],
  ['redact', 'rule', 'rules', () => redact({ rule: ['email'] } as never)],
  ['audit', 'argument', 'arguments', () => audit({ logger: { log() {} }, argument: [] } as never)],
  ['metrics', 'registy', 'registry', () => metrics({ registry: new Registry(), registy: 1 } as never)],
  [
    'dispatch',
    'serverinfo',
    'serverInfo',
    () => dispatch({ anonymous: true, handlers: {}, serverInfo, serverinfo: 1 } as never),
  ],
  [
    'mcpEndpoint',
    'limit',
    'limits',
    () =>
      mcpEndpoint({ auth: { apiKeys: [key] }, handlers: {}, dispatch: { serverInfo }, limit: {} } as never),
  ],
  ['toolFilter', 'allowed', 'allow', () => toolFilter({ allowed: ['x'] } as never)],
  ['ToolRegistry', 'pagesize', 'pageSize', () => new ToolRegistry({ pagesize: 5 } as never)],
  ['resources', 'source', 'sources', () => resources({ source: [] } as never)],
  ['prompts', 'prompt', 'prompts', () => prompts({ prompt: [] } as never)],
  ['completion', 'prompt', 'prompts', () => completion({ prompt: {} } as never)],
  ['redisChangeFeed', 'chanel', 'channel', () => redisChangeFeed({ chanel: 'x' } as never)],
];

describe('every factory refuses a misspelt option', () => {
  test.each(rows)('%s({ %s })', (factory, option, suggested, call) => {
    let thrown: unknown;
    try {
      call();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    const message = (thrown as Error).message;
    expect(message.startsWith(`${factory}: `)).toBe(true);
    expect(message).toContain(`"${option}"`);
    expect(message).toContain(`did you mean "${suggested}"`);
    expect((thrown as { code?: unknown }).code).toBe(OPTION_ERRORS.unknown);
    const docs = / \(see (docs\/[^\s)]+)\)$/.exec(message)?.[1];
    expect(docs).toBe(optionDocs(factory));
    expect(resolves(docs!)).toBe(true);
  });

  test('loadCatalogue({ maxFile }) rejects, naming maxFiles', async () => {
    await expect(loadCatalogue(__dirname, { maxFile: 1 } as never)).rejects.toThrow(
      /^loadCatalogue: .*"maxFile".*did you mean "maxFiles"/,
    );
  });

  test('ChangeFeed takes no options', () => {
    expect(new ChangeFeed().constructor.length).toBe(0);
  });
});

/** `docs/page.md#anchor` names a page of the repository and a heading on it. */
function resolves(target: string): boolean {
  const [page, anchor] = target.split('#');
  let text: string;
  try {
    text = readFileSync(join(__dirname, '../..', page!), 'utf8');
  } catch {
    return false;
  }
  return anchor !== undefined && anchorsOf(text).has(anchor);
}

describe('option errors name their docs and carry a code', () => {
  test.each(documentedFactories().map((f) => [f, optionDocs(f)!]))('%s → %s resolves', (_factory, docs) => {
    expect(resolves(docs)).toBe(true);
  });

  test('every kind of mistake has its code', () => {
    const codeOf = (call: () => unknown): unknown => {
      try {
        call();
      } catch (e) {
        return (e as { code?: unknown }).code;
      }
      return undefined;
    };
    expect(codeOf(() => parse({ limt: 1 } as never))).toBe('ERR_MCPWARE_UNKNOWN_OPTION');
    expect(codeOf(() => methodGuard({ allowOptions: 'yes' } as never))).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(codeOf(() => methodGuard(5 as never))).toBe('ERR_MCPWARE_INVALID_OPTION');
    expect(codeOf(() => mcpEndpoint({ auth: { apiKeys: [key] }, handlers: {} } as never))).toBe(
      'ERR_MCPWARE_MISSING_OPTION',
    );
    expect(
      codeOf(() => dispatch({ anonymous: true, handlers: {}, serverInfo, maxListenStreams: 3 } as never)),
    ).toBe('ERR_MCPWARE_MOVED_OPTION');
  });

  test('the troubleshooting page lists every code', () => {
    const page = readFileSync(join(__dirname, '../../docs/troubleshooting.md'), 'utf8');
    for (const code of Object.values(OPTION_ERRORS)) expect(page).toContain(`\`${code}\``);
  });
});

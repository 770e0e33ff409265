/**
 * dispatch() validates its options at construction: a TypeError naming the option.
 */
import { dispatch, type DispatchOptions } from '../../../middleware/dispatch/index';
import { HANDLER_METHODS } from '../../../core/contract';

const serverInfo = { name: 's', version: '1' };
const tools = { list: () => ({ tools: [] }), call: () => ({ content: [] }) };

function make(o: Partial<DispatchOptions> & Record<string, unknown>): () => unknown {
  return () => dispatch({ anonymous: true, handlers: { tools }, serverInfo, ...o } as DispatchOptions);
}

describe('dispatch() options', () => {
  test('a minimal valid configuration builds', () => {
    expect(typeof make({})()).toBe('function');
  });

  test.each([
    ['options', () => dispatch(null as unknown as DispatchOptions), /options must be an object/],
    ['serverInfo missing', make({ serverInfo: undefined }), /option "serverInfo"/],
    ['serverInfo without version', make({ serverInfo: { name: 'x' } as never }), /option "serverInfo"/],
    ['handlers missing', make({ handlers: undefined }), /option "handlers"/],
    ['handlers an array', make({ handlers: [] as never }), /option "handlers"/],
    ['a handler that is a string', make({ handlers: { tools: 'x' } as never }), /option "handlers.tools"/],
    ['a namespace with a slash', make({ handlers: { 'a/b': {} } as never }), /option "handlers.a\/b"/],
    [
      'HANDLER_METHODS naming a non-function',
      make({ handlers: { x: { [HANDLER_METHODS]: ['go'] } } as never }),
      /handlers.x.go/,
    ],
    ['instructions not a string', make({ instructions: 5 as never }), /option "instructions"/],
    [
      'cache for a non-cacheable method',
      make({ cache: { 'tools/call': { ttlMs: 1, cacheScope: 'public' } } }),
      /option "cache"/,
    ],
    [
      'cache with a negative ttl',
      make({ cache: { 'tools/list': { ttlMs: -1, cacheScope: 'public' } } }),
      /option "cache.tools\/list"/,
    ],
    [
      'cache with a fractional ttl',
      make({ cache: { 'tools/list': { ttlMs: 1.5, cacheScope: 'public' } } }),
      /option "cache.tools\/list"/,
    ],
    [
      'cache with a bad scope',
      make({ cache: { 'tools/list': { ttlMs: 1, cacheScope: 'shared' as never } } }),
      /option "cache.tools\/list"/,
    ],
    ['logger without error()', make({ logger: {} as never }), /option "logger"/],
    [
      'bad modernVersions',
      make({ versions: { modernVersions: ['v2'] } }),
      /option "versions.modernVersions"/,
    ],
    [
      'no version at all',
      make({ versions: { modernVersions: [], legacyVersions: [] } }),
      /option "versions.modernVersions"/,
    ],
    ['versions not an object', make({ versions: [] as never }), /option "versions" must be an object/],
    ['streams not an object', make({ streams: 5 as never }), /option "streams" must be an object/],
    ['capabilities not an object', make({ capabilities: 'all' as never }), /option "capabilities"/],
    [
      'capabilities.tools not an object',
      make({ capabilities: { tools: true as never } }),
      /option "capabilities.tools"/,
    ],
    [
      'a declared capability without handlers',
      make({ capabilities: { prompts: {} } }),
      /declares prompts.*handlers.prompts.list and handlers.prompts.get are missing/,
    ],
    [
      'resources.subscribe without handlers',
      make({
        handlers: { resources: { list: () => ({}), read: () => ({}) } },
        capabilities: { resources: { subscribe: true } },
      }),
      /resources.subscribe/,
    ],
    [
      'listChanged (no channel for it yet)',
      make({ capabilities: { tools: { listChanged: true } } }),
      /capabilities.tools.listChanged/,
    ],
    [
      'part of a capability (derived)',
      make({ handlers: { tools: { list: () => ({}) } } }),
      /part of the tools methods; add tools.call/,
    ],
    ['a body limit that is not a size', make({ body: { limit: 'huge' } }), /option "limit"/],
    [
      'a negative per-caller listen cap',
      make({ streams: { maxListenStreamsPerPrincipal: -1 } }),
      /option "streams.maxListenStreamsPerPrincipal" must be an integer from 0/,
    ],
    [
      'a fractional per-caller listen cap',
      make({ streams: { maxListenStreamsPerPrincipal: 1.5 } }),
      /option "streams.maxListenStreamsPerPrincipal"/,
    ],
    [
      'a per-caller listen cap given as a string',
      make({ streams: { maxListenStreamsPerPrincipal: '10' as never } }),
      /option "streams.maxListenStreamsPerPrincipal"/,
    ],
    [
      'a legacy input timeout of 0',
      make({ inputRequests: { inputTimeoutMs: 0 } }),
      /option "inputRequests.inputTimeoutMs"/,
    ],
    [
      'no input round at all',
      make({ inputRequests: { maxInputRounds: 0 } }),
      /option "inputRequests.maxInputRounds"/,
    ],
  ])('%s → TypeError', (_what, build, message) => {
    expect(build).toThrow(TypeError);
    expect(build).toThrow(message);
  });

  test.each([
    ['serverinfo', 'serverInfo'],
    ['handler', 'handlers'],
    ['stream', 'streams'],
    ['inputRequest', 'inputRequests'],
  ])('a misspelt option (%s) is refused, naming %s', (wrong, right) => {
    const build = make({ [wrong]: 1 });
    expect(build).toThrow(TypeError);
    expect(build).toThrow(new RegExp(`^dispatch: unknown option "${wrong}"; did you mean "${right}"\\?`));
  });

  test.each([
    ['streams', 'maxListenStream', 'maxListenStreams'],
    ['inputRequests', 'requestStateKeys', 'requestStateKey'],
    ['versions', 'modernversion', 'modernVersions'],
    ['body', 'maxdepth', 'maxDepth'],
  ])('a misspelt option inside %s (%s) is refused, naming %s', (group, wrong, right) => {
    const build = make({ [group]: { [wrong]: 1 } });
    expect(build).toThrow(
      new RegExp(`^dispatch: unknown option ${group}\\."${wrong}"; did you mean "${right}"\\?`),
    );
  });

  // Every flat name of the first layout, and where it is given now.
  test.each([
    ['modernVersions', 'versions.modernVersions'],
    ['legacyVersions', 'versions.legacyVersions'],
    ['limit', 'body.limit'],
    ['maxDepth', 'body.maxDepth'],
    ['keepAliveMs', 'streams.keepAliveMs'],
    ['listenKeepAliveMs', 'streams.keepAliveMs'],
    ['maxListenStreams', 'streams.maxListenStreams'],
    ['maxListenStreamsPerPrincipal', 'streams.maxListenStreamsPerPrincipal'],
    ['requestStateKey', 'inputRequests.requestStateKey'],
    ['requestStateTtlMs', 'inputRequests.requestStateTtlMs'],
    ['inputTimeoutMs', 'inputRequests.inputTimeoutMs'],
    ['maxInputRounds', 'inputRequests.maxInputRounds'],
  ])('the flat %s is refused, naming %s', (old, place) => {
    let thrown: unknown;
    try {
      make({ [old]: 1 })();
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect((thrown as { code?: unknown }).code).toBe('ERR_MCPWARE_MOVED_OPTION');
    expect((thrown as Error).message).toBe(
      `dispatch: option "${old}" belongs at ${place} (see docs/middleware/dispatch.md#options)`,
    );
  });

  test('the groups build a dispatcher with every setting', () => {
    const build = make({
      versions: { modernVersions: ['2026-07-28'], legacyVersions: ['2025-11-25'] },
      body: { limit: '1mb', maxDepth: 32 },
      streams: { keepAliveMs: 0, maxListenStreams: 5, maxListenStreamsPerPrincipal: 1 },
      inputRequests: {
        requestStateKey: 'k'.repeat(32),
        requestStateTtlMs: 60_000,
        inputTimeoutMs: 1000,
        maxInputRounds: 2,
      },
    });
    expect(typeof build()).toBe('function');
  });

  test('capabilities given explicitly may leave out handlers that exist (they are then not answered)', () => {
    expect(typeof make({ capabilities: {} })()).toBe('function');
  });
});

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fc from 'fast-check';
import {
  foldMethod,
  isCacheable,
  isRemovedInModern,
  isRoutableMethod,
  requiredCapability,
  routeKey,
  routeOf,
  splitFolded,
} from '../../lib/routing';

describe('foldMethod', () => {
  test.each([
    ['tools/list', 'tools.list'],
    ['tools/call', 'tools.call'],
    ['initialize', 'initialize'],
    ['notifications/initialized', 'notifications.initialized'],
    ['resources/read', 'resources.read'],
    ['resources/templates/list', 'resources.templatesList'],
    ['notifications/resources/updated', 'notifications.resourcesUpdated'],
    ['server/discover', 'server.discover'],
    ['completion/complete', 'completion.complete'],
    ['a/b/c/d', 'a.bCD'],
    ['tools/', 'tools.'],
    ['tools//list', 'tools.List'],
    ['/list', '.list'],
    ['to"ols/li\\st', 'to"ols.li\\st'],
    ['инструменты/список', 'инструменты.список'],
  ])('%j → %j', (input, out) => {
    expect(foldMethod(input)).toBe(out);
  });

  test('agrees with the definition, character by character, on any string', () => {
    // The definition: the first `/` becomes `.`, every later `/` is dropped, and the ASCII letter after it is
    // upper-cased.
    const byDefinition = (method: string): string => {
      const first = method.indexOf('/');
      if (first < 0) return method;
      let out = method.slice(0, first) + '.';
      let upper = false;
      for (const ch of method.slice(first + 1)) {
        if (ch === '/') upper = true;
        else {
          out += upper && ch >= 'a' && ch <= 'z' ? ch.toUpperCase() : ch;
          upper = false;
        }
      }
      return out;
    };
    const slashy = fc.stringMatching(/^[a-zA-Zé/_.-]{0,24}$/);
    fc.assert(
      fc.property(fc.oneof(slashy, fc.string()), (m) => foldMethod(m) === byDefinition(m)),
      {
        numRuns: 2000,
      },
    );
    fc.assert(
      fc.property(fc.oneof(slashy, fc.string()), (m) => {
        const [ns, member] = routeOf(m);
        return m.includes('/') ? `${ns}.${member}` === foldMethod(m) : ns === '' && member === m;
      }),
    );
  });

  test('folds a 3.5 MiB slashed name in a 32 MB heap (the result is built in one buffer)', () => {
    // In a child with a small heap: a fold that keeps one string per segment runs it out of memory.
    const script = `
      const { foldMethod, routeFor } = require('./lib/routing.ts');
      const m = 'n/' + 'a/'.repeat(1835006) + 'a';
      const f = foldMethod(m);
      const r = routeFor(m);
      process.stdout.write(JSON.stringify([f.length, r.member.length, f.slice(0, 6)]));
    `;
    const out = spawnSync(process.execPath, ['--max-old-space-size=32', '--import', 'tsx', '-e', script], {
      cwd: path.resolve(__dirname, '../..'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: out.status, stdout: out.stdout }).toEqual({
      status: 0,
      stdout: JSON.stringify([1835009, 1835007, 'n.aAAA']),
    });
  });

  test('splitFolded', () => {
    expect(splitFolded('tools.list')).toEqual(['tools', 'list']);
    expect(splitFolded('resources.templatesList')).toEqual(['resources', 'templatesList']);
    expect(splitFolded('ping')).toEqual(['', 'ping']);
  });
});

describe('routeOf and routeKey', () => {
  test.each([
    ['tools/list', ['tools', 'list']],
    ['resources/templates/list', ['resources', 'templatesList']],
    ['ping', ['', 'ping']],
    ['tools.list', ['', 'tools.list']],
  ] as const)('%j → %j', (method, route) => {
    expect(routeOf(method)).toEqual(route);
  });

  test('a root method named like a folded one is another route', () => {
    expect(routeKey('tools.list')).not.toBe(routeKey('tools/list'));
    expect(routeKey('resources/templatesList')).toBe(routeKey('resources/templates/list'));
  });

  test('the tables match every spelling of a route, and only that route', () => {
    expect(isCacheable('resources/templatesList')).toBe(true);
    expect(isCacheable('tools.list')).toBe(false);
    expect(requiredCapability('resources/subscribe')).toBe('resources.subscribe');
    expect(requiredCapability('server/discover')).toBeUndefined();
    expect(isRemovedInModern('logging/setLevel')).toBe(true);
    expect(isRemovedInModern('tools/list')).toBe(false);
  });

  test.each(['', '/tools', 'tools/', 'tools//call', 'tools/call/'])('%j is not routable', (method) => {
    expect(isRoutableMethod(method)).toBe(false);
  });
});

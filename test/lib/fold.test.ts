import { foldMethod, splitFolded } from '../../lib/fold';

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

  test('splitFolded', () => {
    expect(splitFolded('tools.list')).toEqual(['tools', 'list']);
    expect(splitFolded('resources.templatesList')).toEqual(['resources', 'templatesList']);
    expect(splitFolded('ping')).toEqual(['', 'ping']);
  });
});

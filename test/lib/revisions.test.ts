import {
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  SUPPORTED_VERSIONS,
  isModernClaim,
  isRevision,
  negotiateVersion,
} from '../../lib/revisions';
import { isReservedMetaKey, stripReservedMeta } from '../../lib/meta';

describe('revisions', () => {
  test('supported lists', () => {
    expect(MODERN_VERSIONS).toEqual(['2026-07-28']);
    expect(LEGACY_VERSIONS).toEqual(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']);
    expect(SUPPORTED_VERSIONS[0]).toBe('2026-07-28');
  });

  test.each([
    ['2026-07-28', true],
    ['2025-11-25', true],
    ['draft', false],
    ['2026-07-2', false],
    ['2026-07-2a', false],
    ['20260728', false],
    ['', false],
    [42, false],
  ])('isRevision(%j) = %j', (v, ok) => expect(isRevision(v)).toBe(ok));

  test.each([
    ['2026-07-28', true],
    ['2027-01-01', true],
    ['2026-07-29', true],
    ['2025-11-25', false],
    ['latest', false],
  ])('isModernClaim(%j) = %j', (v, ok) => expect(isModernClaim(v)).toBe(ok));

  test.each([
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'],
    ['2024-11-05', '2024-11-05'],
    ['2025-08-01', '2025-06-18'],
    ['2026-01-01', '2025-11-25'],
    ['2026-07-28', '2025-11-25'],
    ['2030-01-01', '2025-11-25'],
    ['2024-10-07', '2025-11-25'],
    ['1900-01-01', '2025-11-25'],
    ['garbage', '2025-11-25'],
    [undefined, '2025-11-25'],
  ])('initialize negotiation: %j → %j', (asked, answer) => {
    expect(negotiateVersion(asked)).toBe(answer);
  });
});

describe('reserved _meta keys', () => {
  test.each([
    ['io.modelcontextprotocol/protocolVersion', true],
    ['dev.mcp/anything', true],
    ['com.example.mcp/x', false],
    ['io.modelcontextprotocol.registry/publisher-provided', true], // second label rule
    ['traceparent', true],
    ['progressToken', false],
    ['custom', false],
  ])('%j reserved: %j', (k, r) => expect(isReservedMetaKey(k)).toBe(r));

  test('stripReservedMeta keeps progressToken, tracing and custom keys only', () => {
    const out = stripReservedMeta({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/serverInfo': { name: 'attacker' },
      'io.modelcontextprotocol/subscriptionId': 'sub-1',
      progressToken: 'tok-1',
      traceparent: '00-abc-def-01',
      custom: 42,
      'io.modelcontextprotocol.registry/publisher-provided': {},
    });
    expect(out).toEqual({
      progressToken: 'tok-1',
      traceparent: '00-abc-def-01',
      custom: 42,
    });
    expect(stripReservedMeta({ 'io.modelcontextprotocol/clientInfo': {} })).toBeUndefined();
    expect(stripReservedMeta(undefined)).toBeUndefined();
  });
});

import { classifyEnvelope } from '../../lib/classify';

const PV = 'io.modelcontextprotocol/protocolVersion';
const CI = 'io.modelcontextprotocol/clientInfo';
const CC = 'io.modelcontextprotocol/clientCapabilities';
const LL = 'io.modelcontextprotocol/logLevel';
const VM = { [PV]: '2026-07-28', [CI]: { name: 'test-client', version: '1.0.0' }, [CC]: {} };

type Row = [
  label: string,
  method: string,
  meta: Record<string, unknown> | undefined,
  header: string | undefined,
  era: 'modern' | 'legacy',
  reason: string | null,
  code?: number,
  data?: unknown,
];

// ToolHive's TestClassifyRevision rows (reference/toolhive.md §3.3) with the spec's precedence where it differs
// (spec.md §3 "Precedence observed by the conformance suite", §8.A items 5–11).
const rows: Row[] = [
  [
    '1 valid envelope, no header (header presence is checkHeaders’ job)',
    'tools/call',
    VM,
    undefined,
    'modern',
    null,
  ],
  ['2 valid envelope, matching header', 'tools/call', VM, '2026-07-28', 'modern', null],
  [
    '3 header 2025-11-25 vs body 2026-07-28 → -32020',
    'tools/call',
    VM,
    '2025-11-25',
    'modern',
    'protocol_version_mismatch',
    -32020,
    { header: 'MCP-Protocol-Version', headerValue: '2025-11-25', bodyValue: '2026-07-28' },
  ],
  [
    '4 body 2099 without header → -32022',
    'tools/call',
    { [PV]: '2099-01-01', [CC]: {} },
    undefined,
    'modern',
    'unsupported_protocol_version',
    -32022,
    { supported: ['2026-07-28'], requested: '2099-01-01' },
  ],
  [
    '5 no _meta, modern header → -32602 (spec item 5; ToolHive said -32020)',
    'tools/call',
    undefined,
    '2026-07-28',
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '6 _meta without signal keys, modern header → -32602',
    'tools/call',
    { other: 'value' },
    '2026-07-28',
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '7 protocolVersion 42, modern header → -32602 (spec item 6)',
    'tools/call',
    { [PV]: 42, [CC]: {} },
    '2026-07-28',
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    // An empty version is a version: the header/body equality check comes first (spec checklist).
    '8 protocolVersion "", modern header → -32020',
    'tools/call',
    { [PV]: '', [CC]: {} },
    '2026-07-28',
    'modern',
    'protocol_version_mismatch',
    -32020,
  ],
  [
    '8b protocolVersion "" and header "" → -32022 (no server supports the empty version)',
    'tools/call',
    { [PV]: '', [CC]: {} },
    '',
    'modern',
    'unsupported_protocol_version',
    -32022,
  ],
  ['9 clientInfo is optional', 'tools/call', { [PV]: '2026-07-28', [CC]: {} }, undefined, 'modern', null],
  [
    '10 clientCapabilities missing → -32602 (spec item 7; ToolHive said -32021)',
    'tools/call',
    { [PV]: '2026-07-28', [CI]: { name: 'x' } },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  ['11 no _meta, no header → legacy', 'tools/call', undefined, undefined, 'legacy', null],
  ['12 unrelated _meta → legacy', 'tools/call', { other: 'value' }, undefined, 'legacy', null],
  [
    '13 unrelated _meta, header 2099 (a modern claim) → -32602',
    'tools/call',
    { other: 'value' },
    '2099-01-01',
    'modern',
    'missing_envelope',
    -32602,
  ],
  ['14 logLevel alone is not a signal', 'tools/call', { [LL]: 'debug' }, undefined, 'legacy', null],
  [
    '15 protocolVersion 42 without header → -32602',
    'tools/call',
    { [PV]: 42 },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '16 protocolVersion "" without header → -32602',
    'tools/call',
    { [PV]: '' },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '17 clientCapabilities alone → -32602',
    'tools/call',
    { [CC]: {} },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '18 clientInfo + empty version → -32602',
    'tools/call',
    { [CI]: { name: 'x' }, [PV]: '' },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '19 reserved keys with a legacy header → legacy (clients negotiating 2025-11-25)',
    'tools/call',
    { [CC]: {} },
    '2025-11-25',
    'legacy',
    null,
  ],
  [
    '20 clientCapabilities alone with modern header → -32602',
    'tools/call',
    { [CC]: {} },
    '2026-07-28',
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    '21 clientInfo with header 1999 → legacy, but 1999 is unsupported → 400',
    'tools/call',
    { [CI]: { name: 'openai-mcp' } },
    '1999-01-01',
    'legacy',
    'unsupported_legacy_version',
    -32602,
  ],
  ['22 initialize without _meta → legacy', 'initialize', undefined, undefined, 'legacy', null],
  [
    '22b initialize with a modern header but no envelope → legacy',
    'initialize',
    undefined,
    '2026-07-28',
    'legacy',
    null,
  ],
  [
    '23 initialize with a modern envelope → modern (dispatch answers 404 -32601: removed method)',
    'initialize',
    VM,
    '2026-07-28',
    'modern',
    null,
  ],
  [
    'spec 9: 1900 in header and body → -32022',
    'tools/list',
    { [PV]: '1900-01-01', [CC]: {} },
    '1900-01-01',
    'modern',
    'unsupported_protocol_version',
    -32022,
    { supported: ['2026-07-28'], requested: '1900-01-01' },
  ],
  [
    'spec 10: header 2026 vs body 1900 → -32020 before -32022',
    'tools/list',
    { [PV]: '1900-01-01', [CC]: {} },
    '2026-07-28',
    'modern',
    'protocol_version_mismatch',
    -32020,
  ],
  [
    'conformance: header 2026 vs body v999.0.0 → -32020',
    'tools/list',
    { [PV]: 'v999.0.0', [CC]: {} },
    '2026-07-28',
    'modern',
    'protocol_version_mismatch',
    -32020,
  ],
  [
    'conformance: both v999.0.0 → -32022',
    'tools/list',
    { [PV]: 'v999.0.0', [CC]: {} },
    'v999.0.0',
    'modern',
    'unsupported_protocol_version',
    -32022,
    { supported: ['2026-07-28'], requested: 'v999.0.0' },
  ],
  [
    'body names a legacy revision in the envelope → -32022',
    'tools/list',
    { [PV]: '2025-11-25', [CC]: {} },
    '2025-11-25',
    'modern',
    'unsupported_protocol_version',
    -32022,
  ],
  [
    'clientCapabilities [] → -32602',
    'tools/list',
    { [PV]: '2026-07-28', [CC]: [] },
    undefined,
    'modern',
    'invalid_envelope',
    -32602,
  ],
  [
    'clientCapabilities null → -32602',
    'tools/list',
    { [PV]: '2026-07-28', [CC]: null },
    undefined,
    'modern',
    'invalid_envelope',
    -32602,
  ],
  [
    'clientInfo "str" → -32602',
    'tools/list',
    { [PV]: '2026-07-28', [CC]: {}, [CI]: 'nope' },
    undefined,
    'modern',
    'invalid_envelope',
    -32602,
  ],
  [
    'clientInfo null is a signal → -32602',
    'tools/list',
    { [CI]: null },
    undefined,
    'modern',
    'missing_envelope',
    -32602,
  ],
  [
    'invalid logLevel → -32602',
    'tools/list',
    { ...VM, [LL]: 'verbose' },
    '2026-07-28',
    'modern',
    'invalid_envelope',
    -32602,
  ],
  ['valid logLevel', 'tools/list', { ...VM, [LL]: 'warning' }, '2026-07-28', 'modern', null],
  [
    'garbage header alone → legacy + unsupported legacy header',
    'tools/list',
    undefined,
    'garbage',
    'legacy',
    'unsupported_legacy_version',
    -32602,
  ],
  [
    'garbage header with full envelope → -32020',
    'tools/list',
    VM,
    'garbage',
    'modern',
    'protocol_version_mismatch',
    -32020,
  ],
  ['legacy header 2025-06-18 → legacy', 'tools/list', undefined, '2025-06-18', 'legacy', null],
  ['legacy header 2024-11-05 → legacy', 'tools/list', undefined, '2024-11-05', 'legacy', null],
];

describe('classifyEnvelope table', () => {
  // One argument per case (jest treats a trailing unfilled parameter as a `done` callback).
  test.each(rows.map((r) => [r[0], r] as const))('%s', (_l, row) => {
    const [, method, meta, header, era, reason, code, data] = row;
    const r = classifyEnvelope({ method, meta, header });
    expect(r.era).toBe(era);
    if (reason === null) {
      expect(r.ok).toBe(true);
    } else {
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.reason).toBe(reason);
      expect(r.code).toBe(code);
      expect(r.status).toBe(400);
      if (data !== undefined) expect(r.data).toEqual(data);
    }
  });

  test('modern result reports the version', () => {
    expect(classifyEnvelope({ method: 'tools/list', meta: VM, header: '2026-07-28' })).toEqual({
      ok: true,
      era: 'modern',
      version: '2026-07-28',
    });
  });

  test('notifications are never refused', () => {
    expect(
      classifyEnvelope({
        method: 'notifications/x',
        meta: { [CC]: {} },
        header: '2026-07-28',
        notification: true,
      }),
    ).toEqual({
      ok: true,
      era: 'modern',
      version: '2026-07-28',
    });
    expect(
      classifyEnvelope({
        method: 'notifications/initialized',
        meta: undefined,
        header: undefined,
        notification: true,
      }).ok,
    ).toBe(true);
  });

  test('a server may add modern versions', () => {
    const r = classifyEnvelope(
      { method: 'tools/list', meta: { [PV]: '2027-01-01', [CC]: {} }, header: '2027-01-01' },
      { modernVersions: ['2027-01-01', '2026-07-28'] },
    );
    expect(r).toEqual({ ok: true, era: 'modern', version: '2027-01-01' });
  });
});

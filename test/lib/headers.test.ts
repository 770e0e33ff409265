import { NAME_MEMBER, checkStandardHeaders } from '../../lib/headers';

type Row = [
  label: string,
  method: string,
  params: Record<string, unknown> | undefined,
  headers: Record<string, string | undefined>,
  reason: string | null,
  data?: unknown,
];

const V = '2026-07-28';
const rows: Row[] = [
  // spec.md §8.A 11–18, ToolHive TestValidateHeaderConsistency, mcpkit era_test.go
  [
    '11 MCP-Protocol-Version missing',
    'tools/list',
    {},
    { method: 'tools/list' },
    'missing_header',
    { header: 'MCP-Protocol-Version' },
  ],
  [
    '12 Mcp-Method missing',
    'tools/list',
    {},
    { protocolVersion: V },
    'missing_header',
    { header: 'Mcp-Method' },
  ],
  ['12b Mcp-Method empty', 'tools/list', {}, { protocolVersion: V, method: '' }, 'missing_header'],
  [
    '13 Mcp-Method differs',
    'tools/list',
    {},
    { protocolVersion: V, method: 'prompts/list' },
    'header_mismatch',
    { header: 'Mcp-Method', headerValue: 'prompts/list', bodyValue: 'tools/list' },
  ],
  [
    '14 Mcp-Method case differs',
    'tools/list',
    {},
    { protocolVersion: V, method: 'TOOLS/LIST' },
    'header_mismatch',
  ],
  ['14b Tools/List', 'tools/list', {}, { protocolVersion: V, method: 'Tools/List' }, 'header_mismatch'],
  ['tools/list needs no Mcp-Name', 'tools/list', {}, { protocolVersion: V, method: 'tools/list' }, null],
  [
    'Mcp-Name on tools/list is ignored',
    'tools/list',
    {},
    { protocolVersion: V, method: 'tools/list', name: 'x' },
    null,
  ],
  [
    '16 tools/call without Mcp-Name',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call' },
    'missing_header',
    { header: 'Mcp-Name' },
  ],
  [
    '16 tools/call with wrong Mcp-Name',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: 'wrong' },
    'header_mismatch',
    { header: 'Mcp-Name', headerValue: 'wrong', bodyValue: 'get_weather' },
  ],
  [
    '16 tools/call ok',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: 'get_weather' },
    null,
  ],
  [
    'tools/call name "" without Mcp-Name',
    'tools/call',
    { name: '' },
    { protocolVersion: V, method: 'tools/call' },
    'missing_header',
  ],
  [
    'tools/call name "" with empty Mcp-Name',
    'tools/call',
    { name: '' },
    { protocolVersion: V, method: 'tools/call', name: '' },
    null,
  ],
  [
    '17 resources/read ok',
    'resources/read',
    { uri: 'file:///projects/myapp/config.json' },
    { protocolVersion: V, method: 'resources/read', name: 'file:///projects/myapp/config.json' },
    null,
  ],
  [
    '17 resources/read mismatch',
    'resources/read',
    { uri: 'docs://a.md' },
    { protocolVersion: V, method: 'resources/read', name: 'docs://b.md' },
    'header_mismatch',
  ],
  [
    '17 resources/read missing',
    'resources/read',
    { uri: 'docs://a.md' },
    { protocolVersion: V, method: 'resources/read' },
    'missing_header',
  ],
  [
    '17 prompts/get ok',
    'prompts/get',
    { name: 'greet' },
    { protocolVersion: V, method: 'prompts/get', name: 'greet' },
    null,
  ],
  [
    '17 prompts/get missing',
    'prompts/get',
    { name: 'greet' },
    { protocolVersion: V, method: 'prompts/get' },
    'missing_header',
  ],
  [
    'URI with query and %20 as-is',
    'resources/read',
    { uri: 'docs://a.md?v=2&raw=1%20x' },
    { protocolVersion: V, method: 'resources/read', name: 'docs://a.md?v=2&raw=1%20x' },
    null,
  ],
  [
    'tool name with - and _',
    'tools/call',
    { name: 'my-tool_v2' },
    { protocolVersion: V, method: 'tools/call', name: 'my-tool_v2' },
    null,
  ],
  [
    '18 sentinel decodes to body',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: '=?base64?Z2V0X3dlYXRoZXI=?=' },
    null,
  ],
  [
    '18 sentinel with bad padding',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: '=?base64?Z2V0X3dlYXRoZXI?=' },
    'header_malformed',
  ],
  [
    '18 sentinel with bad alphabet',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: '=?base64?!!!?=' },
    'header_malformed',
  ],
  [
    '18 upper-case sentinel is literal → mismatch',
    'tools/call',
    { name: 'get_weather' },
    { protocolVersion: V, method: 'tools/call', name: '=?BASE64?Z2V0X3dlYXRoZXI=?=' },
    'header_mismatch',
  ],
  [
    'sentinel decoding to another tool',
    'tools/call',
    { name: 'my-tool' },
    { protocolVersion: V, method: 'tools/call', name: '=?base64?b3RoZXItdG9vbA==?=' },
    'header_mismatch',
    { header: 'Mcp-Name', headerValue: 'other-tool', bodyValue: 'my-tool' },
  ],
  [
    'non-ASCII URI via sentinel',
    'resources/read',
    { uri: 'docs://привет.md' },
    {
      protocolVersion: V,
      method: 'resources/read',
      name: '=?base64?' + Buffer.from('docs://привет.md').toString('base64') + '?=',
    },
    null,
  ],
  [
    'raw non-ASCII (latin1 bytes) in Mcp-Name → invalid characters',
    'tools/call',
    { name: 'café' },
    { protocolVersion: V, method: 'tools/call', name: 'cafÃ©' },
    'header_malformed',
  ],
  [
    'body name not a string → mismatch',
    'tools/call',
    { name: 42 },
    { protocolVersion: V, method: 'tools/call', name: '42' },
    'header_mismatch',
  ],
  // The tasks extension (SEP-2663 §Streamable HTTP: Routing Headers): Mcp-Name mirrors params.taskId.
  ...(['tasks/get', 'tasks/update', 'tasks/cancel'] as const).flatMap((m): Row[] => [
    [
      `${m}: Mcp-Name equal to taskId`,
      m,
      { taskId: 'aB3-_x' },
      { protocolVersion: V, method: m, name: 'aB3-_x' },
      null,
    ],
    [
      `${m}: Mcp-Name missing`,
      m,
      { taskId: 'aB3-_x' },
      { protocolVersion: V, method: m },
      'missing_header',
      { header: 'Mcp-Name' },
    ],
    [
      `${m}: Mcp-Name another task's id`,
      m,
      { taskId: 'aB3-_x' },
      { protocolVersion: V, method: m, name: 'other' },
      'header_mismatch',
      { header: 'Mcp-Name', headerValue: 'other', bodyValue: 'aB3-_x' },
    ],
    [
      `${m}: Mcp-Name names the tool, not the task`,
      m,
      { taskId: 'aB3-_x', name: 'slow_compute' },
      { protocolVersion: V, method: m, name: 'slow_compute' },
      'header_mismatch',
    ],
    [
      `${m}: taskId not a string`,
      m,
      { taskId: 7 },
      { protocolVersion: V, method: m, name: '7' },
      'header_mismatch',
      { header: 'Mcp-Name', headerValue: '7', bodyValue: '' },
    ],
    [
      `${m}: taskId absent, Mcp-Name sent`,
      m,
      {},
      { protocolVersion: V, method: m, name: 'x' },
      'header_mismatch',
    ],
    [
      `${m}: Mcp-Name as a Base64 sentinel`,
      m,
      { taskId: 'tâche' },
      { protocolVersion: V, method: m, name: '=?base64?' + Buffer.from('tâche').toString('base64') + '?=' },
      null,
    ],
  ]),
  [
    'tasks/list names no task: no Mcp-Name needed',
    'tasks/list',
    {},
    { protocolVersion: V, method: 'tasks/list' },
    null,
  ],
];

describe('checkStandardHeaders table', () => {
  test.each(rows.map((r) => [r[0], r] as const))('%s', (_l, row) => {
    const [, method, params, headers, reason, data] = row;
    const r = checkStandardHeaders({ method, params, headers });
    if (reason === null) {
      expect(r).toBeUndefined();
      return;
    }
    expect(r).toBeDefined();
    expect(r!.reason).toBe(reason);
    expect(r!.code).toBe(-32020);
    expect(r!.status).toBe(400);
    if (data !== undefined) expect(r!.data).toEqual(data);
  });
});

test('NAME_MEMBER: the methods whose target Mcp-Name mirrors, and the member', () => {
  expect(NAME_MEMBER).toEqual({
    'tools/call': 'name',
    'prompts/get': 'name',
    'resources/read': 'uri',
    'tasks/get': 'taskId',
    'tasks/update': 'taskId',
    'tasks/cancel': 'taskId',
  });
});

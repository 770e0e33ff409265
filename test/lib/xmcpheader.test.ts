import { checkParamHeaders, paramHeaderValues, paramHeaders } from '../../lib/xmcpheader';
import { encodeHeaderValue } from '../../lib/sentinel';

const obj = (properties: Record<string, unknown>) => ({ type: 'object', properties });
const names = (schema: unknown) => {
  const r = paramHeaders(schema);
  if (!r.ok) throw new Error(r.error);
  return r.params.map((p) => [p.path.join('.'), p.name, p.type]);
};
const error = (schema: unknown) => {
  const r = paramHeaders(schema);
  if (r.ok) throw new Error('expected the schema to be rejected');
  return r.error;
};

describe('x-mcp-header schema validation', () => {
  test.each([
    ['none', obj({ query: { type: 'string' } }), []],
    ['empty schema', {}, []],
    ['not an object', null, []],
    [
      'one string',
      obj({ region: { type: 'string', 'x-mcp-header': 'Region' }, query: { type: 'string' } }),
      [['region', 'Region', 'string']],
    ],
    [
      'integer and boolean',
      obj({
        attempts: { type: 'integer', 'x-mcp-header': 'Attempts' },
        dry_run: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      }),
      [
        ['attempts', 'Attempts', 'integer'],
        ['dry_run', 'Dry-Run', 'boolean'],
      ],
    ],
    [
      'nested through properties',
      obj({
        filter: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      }),
      [['filter.region', 'Region', 'string']],
    ],
    [
      'sorted by path',
      obj({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        priority: { type: 'string', 'x-mcp-header': 'Priority' },
      }),
      [
        ['priority', 'Priority', 'string'],
        ['region', 'Region', 'string'],
      ],
    ],
    [
      'every tchar',
      obj({ w: { type: 'string', 'x-mcp-header': "A!#$%&'*+-.^_`|~9z" } }),
      [['w', "A!#$%&'*+-.^_`|~9z", 'string']],
    ],
    [
      'non-schema property values are skipped',
      obj({ bogus: 'not a schema', region: { type: 'string', 'x-mcp-header': 'Region' } }),
      [['region', 'Region', 'string']],
    ],
  ])('accepts %s', (_l, schema, expected) => {
    expect(names(schema)).toEqual(expected);
  });

  test.each([
    ['empty', obj({ r: { type: 'string', 'x-mcp-header': '' } }), /must not be empty/],
    ['not a string', obj({ r: { type: 'string', 'x-mcp-header': 42 } }), /must be a string/],
    [
      'space',
      obj({ r: { type: 'string', 'x-mcp-header': 'My Region' } }),
      /not a valid HTTP field-name token/,
    ],
    ['CRLF', obj({ r: { type: 'string', 'x-mcp-header': 'R\r\nX: y' } }), /token/],
    ['colon', obj({ r: { type: 'string', 'x-mcp-header': 'R:egion' } }), /token/],
    ['non-ASCII', obj({ r: { type: 'string', 'x-mcp-header': 'Régión' } }), /token/],
    ['number type', obj({ r: { type: 'number', 'x-mcp-header': 'R' } }), /not permitted on type "number"/],
    ['object type', obj({ r: { type: 'object', 'x-mcp-header': 'R' } }), /not permitted/],
    ['array type', obj({ r: { type: 'array', 'x-mcp-header': 'R' } }), /not permitted/],
    ['missing type', obj({ r: { 'x-mcp-header': 'R' } }), /declared type/],
    ['union type', obj({ r: { type: ['string', 'null'], 'x-mcp-header': 'R' } }), /declared type/],
    [
      'duplicate',
      obj({
        a: { type: 'string', 'x-mcp-header': 'Region' },
        b: { type: 'string', 'x-mcp-header': 'Region' },
      }),
      /collides/,
    ],
    [
      'duplicate ignoring case',
      obj({
        a: { type: 'string', 'x-mcp-header': 'Region' },
        b: { type: 'string', 'x-mcp-header': 'REGION' },
      }),
      /collides/,
    ],
    [
      'duplicate across depth',
      obj({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        filter: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'region' } } },
      }),
      /collides/,
    ],
    [
      'under items',
      obj({
        t: {
          type: 'array',
          items: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
        },
      }),
      /only allowed on properties/,
    ],
    [
      'under oneOf',
      obj({
        t: {
          oneOf: [
            { type: 'string' },
            { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
          ],
        },
      }),
      /only allowed/,
    ],
    ['under anyOf', obj({ t: { anyOf: [{ type: 'string', 'x-mcp-header': 'Zone' }] } }), /only allowed/],
    [
      'under allOf',
      { type: 'object', allOf: [obj({ z: { type: 'string', 'x-mcp-header': 'Zone' } })] },
      /only allowed/,
    ],
    [
      'under if/then',
      { type: 'object', if: {}, then: obj({ z: { type: 'string', 'x-mcp-header': 'Zone' } }) },
      /only allowed/,
    ],
    [
      'under $defs',
      { type: 'object', $defs: { x: obj({ z: { type: 'string', 'x-mcp-header': 'Zone' } }) } },
      /only allowed/,
    ],
    [
      'under additionalProperties',
      { type: 'object', additionalProperties: { type: 'string', 'x-mcp-header': 'Zone' } },
      /only allowed/,
    ],
    ['on the root', { type: 'object', 'x-mcp-header': 'Bogus' }, /root/],
  ])('rejects %s', (_l, schema, pattern) => {
    expect(error(schema)).toMatch(pattern);
  });

  test('depth bound: 62 levels fine, 74 rejected', () => {
    const deep = (n: number) => {
      let s: Record<string, unknown> = { type: 'string', 'x-mcp-header': 'Deep' };
      for (let i = 0; i < n; i++) s = { type: 'object', properties: { p: s } };
      return s;
    };
    expect(names(deep(62))).toHaveLength(1);
    expect(error(deep(74))).toMatch(/maximum inspection depth/);
  });
});

describe('Mcp-Param-* checks against arguments (spec.md §8.A item 19)', () => {
  const schema = obj({
    region: { type: 'string', 'x-mcp-header': 'Region' },
    count: { type: 'integer', 'x-mcp-header': 'Count' },
    dry: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
    filter: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
    verbose: { type: 'boolean' },
  });
  const r = paramHeaders(schema);
  if (!r.ok) throw new Error(r.error);
  const params = r.params;

  type Row = [string, Record<string, unknown>, Record<string, string>, string | null];
  const rows: Row[] = [
    ['matching header', { region: 'us-west1' }, { 'mcp-param-region': 'us-west1' }, null],
    ['missing header', { region: 'us-west1' }, {}, 'missing_header'],
    ['different value', { region: 'us-west1' }, { 'mcp-param-region': 'eu-west1' }, 'header_mismatch'],
    ['null value, no header', { region: null }, {}, null],
    ['absent value, no header', {}, {}, null],
    ['absent value, stray header ignored', {}, { 'mcp-param-region': 'x' }, null],
    ['sentinel accepted', { region: 'us-west1' }, { 'mcp-param-region': '=?base64?dXMtd2VzdDE=?=' }, null],
    [
      'bad sentinel',
      { region: 'us-west1' },
      { 'mcp-param-region': '=?base64?dXMtd2VzdDE?=' },
      'header_malformed',
    ],
    ['control characters', { region: 'us' }, { 'mcp-param-region': 'us\x01' }, 'header_malformed'],
    [
      'raw non-ASCII (obs-text) instead of the sentinel',
      { region: 'zürich' },
      { 'mcp-param-region': 'zÃ¼rich' },
      'header_malformed',
    ],
    ['integer numerically: 42.0 = 42', { count: 42 }, { 'mcp-param-count': '42.0' }, null],
    ['integer: 42', { count: 42 }, { 'mcp-param-count': '42' }, null],
    ['integer: -7', { count: -7 }, { 'mcp-param-count': '-7' }, null],
    ['integer mismatch', { count: 42 }, { 'mcp-param-count': '43' }, 'header_mismatch'],
    ['integer not a number', { count: 42 }, { 'mcp-param-count': 'forty-two' }, 'header_mismatch'],
    ['boolean true', { dry: true }, { 'mcp-param-dry-run': 'true' }, null],
    ['boolean false', { dry: false }, { 'mcp-param-dry-run': 'false' }, null],
    ['boolean case', { dry: true }, { 'mcp-param-dry-run': 'True' }, 'header_mismatch'],
    ['nested value', { filter: { zone: 'a' } }, { 'mcp-param-zone': 'a' }, null],
    ['nested missing header', { filter: { zone: 'a' } }, {}, 'missing_header'],
    ['nested chain broken', { filter: 'x' }, {}, null],
    [
      'non-ASCII via sentinel',
      { region: 'zürich' },
      { 'mcp-param-region': encodeHeaderValue('zürich') },
      null,
    ],
    // Each JSON type compares by its canonical form; a wrong type mirrored faithfully is the arguments' check.
    ['string param, integer 42 as "42"', { region: 42 }, { 'mcp-param-region': '42' }, null],
    ['string param, number 1.5 as "1.5"', { region: 1.5 }, { 'mcp-param-region': '1.5' }, null],
    ['string param, true as "true"', { region: true }, { 'mcp-param-region': 'true' }, null],
    ['string param, integer 42 as "43"', { region: 42 }, { 'mcp-param-region': '43' }, 'header_mismatch'],
    ['string param, true as "True"', { region: true }, { 'mcp-param-region': 'True' }, 'header_mismatch'],
    ['string param, object', { region: {} }, { 'mcp-param-region': '{}' }, 'header_mismatch'],
    ['string param, array', { region: ['a'] }, { 'mcp-param-region': 'a' }, 'header_mismatch'],
    ['integer param, number 1.5 as "1.5"', { count: 1.5 }, { 'mcp-param-count': '1.5' }, null],
    ['integer param, number 1.5 as "2.5"', { count: 1.5 }, { 'mcp-param-count': '2.5' }, 'header_mismatch'],
    ['integer param, string "5" as "5"', { count: '5' }, { 'mcp-param-count': '5' }, null],
    ['integer param, string "5" as "5.0"', { count: '5' }, { 'mcp-param-count': '5.0' }, 'header_mismatch'],
    ['integer param, 0 as "-0"', { count: 0 }, { 'mcp-param-count': '-0' }, null],
    ['integer param, 1e3 as "1000"', { count: 1e3 }, { 'mcp-param-count': '1000' }, null],
    [
      'integer param, unsafe 2^60',
      { count: 2 ** 60 },
      { 'mcp-param-count': String(2 ** 60) },
      'header_mismatch',
    ],
    ['boolean param, string "true" as "true"', { dry: 'true' }, { 'mcp-param-dry-run': 'true' }, null],
    ['boolean param, integer 1 as "1"', { dry: 1 }, { 'mcp-param-dry-run': '1' }, null],
    ['boolean param, integer 1 as "true"', { dry: 1 }, { 'mcp-param-dry-run': 'true' }, 'header_mismatch'],
  ];
  test.each(rows.map((r) => [r[0], r] as const))('%s', (_l, row) => {
    const [, args, headers, reason] = row;
    const out = checkParamHeaders(params, args, headers);
    if (reason === null) expect(out).toBeUndefined();
    else {
      expect(out?.reason).toBe(reason);
      expect(out?.code).toBe(-32020);
      expect(out?.status).toBe(400);
    }
  });

  test('client side values mirror what the server checks', () => {
    const args = { region: 'zürich', count: 3, dry: false, filter: { zone: 'z1' }, verbose: true };
    const h = paramHeaderValues(params, args, encodeHeaderValue);
    expect(h).toEqual({
      'Mcp-Param-Region': encodeHeaderValue('zürich'),
      'Mcp-Param-Count': '3',
      'Mcp-Param-Dry-Run': 'false',
      'Mcp-Param-Zone': 'z1',
    });
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    expect(checkParamHeaders(params, args, lower)).toBeUndefined();
  });

  test('client side values are the canonical form of the value sent, whatever type the schema declares', () => {
    const args = { region: 1.5, count: '7', dry: 0, filter: { zone: true } };
    const h = paramHeaderValues(params, args, encodeHeaderValue);
    expect(h).toEqual({
      'Mcp-Param-Region': '1.5',
      'Mcp-Param-Count': '7',
      'Mcp-Param-Dry-Run': '0',
      'Mcp-Param-Zone': 'true',
    });
    const lower = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    expect(checkParamHeaders(params, args, lower)).toBeUndefined();
    expect(paramHeaderValues(params, { region: {}, count: 2 ** 60 }, encodeHeaderValue)).toEqual({});
  });
});

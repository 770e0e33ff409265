/**
 * State a client carries survives the hop: an input-required round's `requestState` minted by one demo process
 * verifies on another that shares its keys (MCP_REQUEST_STATE_KEYS), through a rotation (the new key signs, the
 * old ones still verify); a state signed with a key a replica lacks is refused; a short key stops the start.
 */
import { randomBytes } from 'node:crypto';
import { McpTestClient } from '../../testing/index';
import { createDemo } from '../../examples/demo';
import { type DemoProcess, runDemoToExit, spawnDemo } from '../support/demo-process';
import { type RunningDemo, startDemo } from '../support/demo';

const AUTH = { Authorization: 'Bearer demo-token' };
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const K1 = hex(32);
const K2 = hex(32);

const client = (url: string) =>
  new McpTestClient(url, { headers: AUTH, clientCapabilities: { elicitation: {} } });

/** Start the round on `url`: the input-required result naming the `name` question. */
async function startRound(url: string): Promise<string> {
  const r = await client(url).callTool('introduce', {});
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({
    resultType: 'input_required',
    inputRequests: { name: { method: 'elicitation/create' } },
  });
  expect(typeof r.body.result.requestState).toBe('string');
  return r.body.result.requestState as string;
}

/** Finish the round on `url` with the answer and the state. */
function finishRound(url: string, requestState: string) {
  return client(url).request('tools/call', {
    name: 'introduce',
    arguments: {},
    inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
    requestState,
  });
}

describe('two demo processes sharing MCP_REQUEST_STATE_KEYS', () => {
  let a: DemoProcess; // [k1]
  let b: DemoProcess; // [k1]
  let c: DemoProcess; // [k2, k1]: rotated, k2 signs
  let own: RunningDemo; // no keys given: a random key of its own
  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      spawnDemo({ MCP_REQUEST_STATE_KEYS: K1 }),
      spawnDemo({ MCP_REQUEST_STATE_KEYS: K1 }),
      spawnDemo({ MCP_REQUEST_STATE_KEYS: ` ${K2}, ${K1.toUpperCase()} ` }),
    ]);
    own = await startDemo({});
  }, 60_000);
  afterAll(async () => {
    for (const p of [a, b, c]) p?.kill();
    await own?.stop();
  });

  test('a round started on A completes on B', async () => {
    const state = await startRound(a.url);
    const r = await finishRound(b.url, state);
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { greeting: 'Hello, Ada!' },
    });
  });

  test('rotation: a state signed with the old key verifies on a replica listing [new, old]', async () => {
    const state = await startRound(a.url);
    const r = await finishRound(c.url, state);
    expect(r.body.result?.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
  });

  test('rotation: a state signed with the new key is refused by a replica holding only the old one', async () => {
    const state = await startRound(c.url);
    expect((await finishRound(c.url, state)).body.result?.structuredContent).toEqual({
      greeting: 'Hello, Ada!',
    });
    const r = await finishRound(a.url, state);
    expect(r.status).toBe(200);
    expect(r.body.error).toMatchObject({ code: -32602, data: { reason: 'invalid' } });
  });

  test('a demo given no keys signs with its own: its states verify nowhere else, and others not on it', async () => {
    const mine = await startRound(own.url);
    expect((await finishRound(a.url, mine)).body.error).toMatchObject({ code: -32602 });
    expect((await finishRound(own.url, await startRound(a.url))).body.error).toMatchObject({
      code: -32602,
    });
    expect((await finishRound(own.url, mine)).body.result?.structuredContent).toEqual({
      greeting: 'Hello, Ada!',
    });
  });
});

describe('MCP_REQUEST_STATE_KEYS that cannot be used', () => {
  test('a key shorter than 32 bytes: the process does not start, exits 1 and says why', async () => {
    const short = hex(16);
    const r = await runDemoToExit({ MCP_REQUEST_STATE_KEYS: `${K1},${short}` });
    expect(r.code).toBe(1);
    expect(r.listened).toBe(false);
    expect(r.output).toMatch(/MCP_REQUEST_STATE_KEYS: key 2 is 16 bytes; each key needs at least 32/);
    expect(r.output).not.toContain(short);
  }, 40_000);

  test.each([
    ['not hex', 'zz'.repeat(32), /key 1 is not hex/],
    ['an odd number of digits', 'a'.repeat(65), /key 1 is not hex/],
    ['an empty list', ' , ', /no key/],
  ])('%s is refused at start-up', async (_what, value, message) => {
    await expect(createDemo({ PORT: '0', MCP_REQUEST_STATE_KEYS: value })).rejects.toThrow(message);
  });
});

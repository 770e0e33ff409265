/**
 * Rotating the `requestState` key under traffic: two demo processes (no balancer: rounds are started on one and
 * answered on the other) are restarted one at a time, step by step, from `MCP_REQUEST_STATE_KEYS=old` to `new`.
 * The procedure documented in docs/guides/replicas.md (read from the page, so the page is what is tested) fails
 * no round; skipping its first step (`[new, old]` straight away) fails the rounds that cross from a replica that
 * already signs with `new` to one that does not hold it yet.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { McpTestClient } from '../../testing/index';
import { type DemoProcess, spawnDemo } from '../support/demo-process';

jest.setTimeout(240_000);

const KEYS: Record<string, string> = {
  old: randomBytes(32).toString('hex'),
  new: randomBytes(32).toString('hex'),
};
/** Rounds started on each process at each moment of a step. */
const ROUNDS_PER_PROCESS = 2;

const client = (url: string) =>
  new McpTestClient(url, {
    headers: { Authorization: 'Bearer demo-token' },
    clientCapabilities: { elicitation: {} },
  });

async function startRound(url: string): Promise<string> {
  const r = await client(url).callTool('introduce', {});
  expect(r.body.result?.resultType).toBe('input_required');
  return r.body.result.requestState as string;
}

/** Answer the round on `url`: true when it completes, false when its state is refused. */
async function finishRound(url: string, requestState: string): Promise<boolean> {
  const r = await client(url).request('tools/call', {
    name: 'introduce',
    arguments: {},
    inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
    requestState,
  });
  if (r.body.error) {
    expect(r.body.error).toMatchObject({ code: -32602, data: { reason: 'invalid' } });
    return false;
  }
  expect(r.body.result?.structuredContent).toEqual({ greeting: 'Hello, Ada!' });
  return true;
}

/** The key lists of the rotation steps in the replicas guide's "requestState keys and rotation" section. */
function documentedSteps(): string[][] {
  const page = readFileSync(path.resolve(__dirname, '../../docs/guides/replicas.md'), 'utf8');
  const section = page.split(/^## requestState keys and rotation$/m)[1]!.split(/^## /m)[0]!;
  const items = section.split(/^\d+\. /m).slice(1);
  return items.map((item) => {
    // The item's last key list (`[new, old]`) is the one it ends with.
    const lists = [...item.split(/\n\s*\n/)[0]!.matchAll(/`\[([a-z, ]+)\]`/g)];
    expect(lists.length).toBeGreaterThan(0);
    return lists[lists.length - 1]![1]!.split(',').map((k) => k.trim());
  });
}

const env = (names: string[]) => ({ MCP_REQUEST_STATE_KEYS: names.map((n) => KEYS[n]!).join(',') });

async function stop(p: DemoProcess): Promise<void> {
  p.proc.kill('SIGTERM');
  await p.exited;
}

/**
 * Roll the steps out over the processes, one process at a time: around each restart, rounds are started on
 * every process before it and after it, and each is answered on every process then up. No round is held over
 * more than one restart, so the wait the guide asks for before the last step is already met.
 */
async function rollOut(steps: string[][]): Promise<{ rounds: number; failed: number }> {
  const procs = await Promise.all([spawnDemo(env(['old'])), spawnDemo(env(['old']))]);
  let rounds = 0;
  let failed = 0;
  const startEverywhere = async (): Promise<string[]> => {
    const states: string[] = [];
    for (const p of procs) for (let i = 0; i < ROUNDS_PER_PROCESS; i++) states.push(await startRound(p.url));
    return states;
  };
  try {
    for (const keys of steps) {
      for (let i = 0; i < procs.length; i++) {
        const before = await startEverywhere();
        // A surge replica first, then the old one goes: the pool never empties.
        const next = await spawnDemo(env(keys));
        await stop(procs[i]!);
        procs[i] = next;
        const after = await startEverywhere();
        for (const state of [...before, ...after])
          for (const p of procs) {
            rounds++;
            if (!(await finishRound(p.url, state))) failed++;
          }
      }
    }
  } finally {
    for (const p of procs) p.kill();
  }
  return { rounds, failed };
}

describe('rotating MCP_REQUEST_STATE_KEYS across demo processes, one restart at a time', () => {
  test('the guide documents three steps: [old, new], then [new, old], then [new]', () => {
    expect(documentedSteps()).toEqual([['old', 'new'], ['new', 'old'], ['new']]);
  });

  test('the documented procedure fails no round', async () => {
    const r = await rollOut(documentedSteps());
    expect(r.rounds).toBeGreaterThan(0);
    expect(r).toEqual({ rounds: r.rounds, failed: 0 });
  });

  test('skipping the first step ([new, old] at once, then [new]) fails rounds mid-roll-out', async () => {
    const r = await rollOut([['new', 'old'], ['new']]);
    expect(r.failed).toBeGreaterThan(0);
  });
});

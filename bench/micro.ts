/**
 * Micro-benchmarks of the hot paths, as plain loops timed with process.hrtime.bigint(): each case runs for a
 * fixed time after a warm-up, in several rounds; the median round is reported in operations per second.
 * Runs from the compiled build in its own process (the runner starts it) and prints one JSON line.
 *
 * Usage: node node_modules/.cache/mcpware-bench/build/bench/micro.js [--quick] (after bench/build.ts)
 */
import { classifyEnvelope } from '../lib/classify.js';
import { checkStandardHeaders } from '../lib/headers.js';
import { parseMessage } from '../lib/jsonrpc.js';
import { compileRedactor } from '../lib/redact/index.js';
import { newTally } from '../lib/redact/types.js';
import { toMcpRequest } from '../lib/request.js';
import { cleanText } from '../lib/sanitize.js';
import { checkParamHeaders, paramHeaders } from '../lib/xmcpheader.js';
import { argumentsDigest } from '../lib/canonical-json.js';
import { AUDIT_CAPS } from '../middleware/audit/index.js';
import { maskOutbound } from '../middleware/redact/walk.js';
import { workloadById } from './workloads.js';

export interface MicroResult {
  name: string;
  what: string;
  opsPerSec: number;
  nsPerOp: number;
  rounds: number[];
}

/** A sink the optimizer cannot see through, so no loop body is dropped as dead code. */
let sink = 0;
function use(v: unknown): void {
  if (v === undefined) sink++;
}

function measure(name: string, what: string, fn: () => void, roundMs: number, rounds: number): MicroResult {
  // Warm-up: long enough for the optimizing compiler to settle.
  const warmEnd = process.hrtime.bigint() + BigInt(roundMs) * 1_000_000n;
  while (process.hrtime.bigint() < warmEnd) for (let i = 0; i < 100; i++) fn();
  const perRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let ops = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(roundMs) * 1_000_000n;
    let now = start;
    while (now < end) {
      for (let i = 0; i < 100; i++) fn();
      ops += 100;
      now = process.hrtime.bigint();
    }
    perRound.push((ops * 1e9) / Number(now - start));
  }
  const sorted = [...perRound].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return { name, what, opsPerSec: median, nsPerOp: 1e9 / median, rounds: perRound };
}

/** Parsing and revision classification of the two tools/call bodies. */
function parseCases(roundMs: number, rounds: number): MicroResult[] {
  const out: MicroResult[] = [];
  const legacyCall = workloadById('legacy-call');
  const modernCall = workloadById('modern-call');

  const parseClassify = (w: typeof modernCall) => () => {
    const m = parseMessage(w.body);
    if (!m.ok) throw new Error('parse failed');
    const mcp = toMcpRequest(m, w.headers, w.body.length);
    const c = classifyEnvelope({
      method: mcp.method ?? '',
      meta: mcp.meta,
      header: mcp.headers.protocolVersion,
      notification: false,
    });
    if (!c.ok) throw new Error('classify failed');
    use(c);
  };
  out.push(
    measure(
      'parse+classify (legacy tools/call)',
      'parseMessage + toMcpRequest + classifyEnvelope',
      parseClassify(legacyCall),
      roundMs,
      rounds,
    ),
  );
  out.push(
    measure(
      'parse+classify (modern tools/call)',
      'parseMessage + toMcpRequest + classifyEnvelope',
      parseClassify(modernCall),
      roundMs,
      rounds,
    ),
  );
  return out;
}

/** The header checks of a modern tools/call whose tool mirrors two arguments into Mcp-Param-* headers. */
function headerCases(roundMs: number, rounds: number): MicroResult[] {
  const out: MicroResult[] = [];
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      limit: { type: 'integer', 'x-mcp-header': 'Limit' },
      text: { type: 'string' },
    },
  };
  const ph = paramHeaders(schema);
  if (!ph.ok) throw new Error(ph.error);
  const params = { name: 'search', arguments: { region: 'eu-west-1', limit: 10, text: 'hello' } };
  const headers: Record<string, string> = {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'search',
    'mcp-param-region': 'eu-west-1',
    'mcp-param-limit': '10',
  };
  out.push(
    measure(
      'header checks (modern tools/call, 2 Mcp-Param)',
      'checkStandardHeaders + checkParamHeaders',
      () => {
        const a = checkStandardHeaders({
          method: 'tools/call',
          params,
          headers: { protocolVersion: '2026-07-28', method: 'tools/call', name: 'search' },
        });
        const b = checkParamHeaders(ph.params, params.arguments, headers);
        if (a || b) throw new Error('header check refused');
      },
      roundMs,
      rounds,
    ),
  );
  return out;
}

/** Redaction of a typical tool result, clean and with secrets. */
function redactionCases(roundMs: number, rounds: number): MicroResult[] {
  const out: MicroResult[] = [];
  // Redaction of a typical tool result: ~1 KB of text in one block plus a small structuredContent.
  const compiled = compileRedactor({ mode: 'mask' });
  if (!compiled.ok) throw new Error(compiled.message);
  const redactor = compiled.redactor;
  const prose =
    'The deployment finished in 42 seconds. Three services were restarted: api, worker and scheduler. ' +
    'Health checks passed on every replica; latency stayed under the service objective throughout. ' +
    'No configuration drift was found between the staging and production manifests, and the rollout ' +
    'can be promoted. Next maintenance window: Tuesday 02:00 UTC. Dashboards were updated accordingly. ';
  const clean = {
    content: [{ type: 'text', text: prose.repeat(3) }],
    structuredContent: { status: 'ok', durationS: 42, services: ['api', 'worker', 'scheduler'] },
  };
  const dirty = {
    content: [
      {
        type: 'text',
        text:
          prose.repeat(2) +
          'Contact ops@example.com, token ghp_0123456789abcdefghijABCDEFGHIJ012345, host 10.1.2.3. ' +
          prose,
      },
    ],
    structuredContent: { status: 'ok', owner: 'ops@example.com' },
  };
  const info = { method: 'tools/call', kind: 'result' as const };
  out.push(
    measure(
      'redaction: 1 KB tool result, nothing to mask',
      'maskOutbound (all 7 rules, mask)',
      () => use(maskOutbound(clean, info, redactor, newTally())),
      roundMs,
      rounds,
    ),
  );
  out.push(
    measure(
      'redaction: 1 KB tool result, 3 secrets',
      'maskOutbound (all 7 rules, mask)',
      () => use(maskOutbound(dirty, info, redactor, newTally())),
      roundMs,
      rounds,
    ),
  );
  return out;
}

/** Audit's sanitizing of a record's caller-authored strings, and the arguments digest. */
function auditCases(roundMs: number, rounds: number): MicroResult[] {
  const out: MicroResult[] = [];
  // The audit record's caller-authored strings: sanitize + mask + cap, and the arguments digest.
  const auditCompiled = compileRedactor({ mode: 'mask', maxLength: 8192 });
  if (!auditCompiled.ok) throw new Error(auditCompiled.message);
  const ar = auditCompiled.redactor;
  const fields: [string, number][] = [
    ['2', AUDIT_CAPS.rpc_id],
    ['/mcp', AUDIT_CAPS.path],
    ['bench-client/1.0.0', AUDIT_CAPS.client],
    ['tools/call', AUDIT_CAPS.method],
    ['echo', AUDIT_CAPS.target],
    ['Mozilla/5.0 (X11; Linux x86_64) my-mcp-client/2.3.1 node/20.20.2', AUDIT_CAPS.user_agent],
    ['POST', AUDIT_CAPS.http_method],
  ];
  const args = { text: 'hello from the bench', options: { verbose: true, count: 3 } };
  out.push(
    measure(
      'audit sanitizing (7 fields + args digest)',
      'cleanText ×7 (sanitize, mask, cap) + argumentsDigest',
      () => {
        const t = newTally();
        for (const [s, cap] of fields) use(cleanText(s, cap, ar, t));
        use(argumentsDigest(args));
      },
      roundMs,
      rounds,
    ),
  );
  return out;
}

export function runMicro(quick: boolean): MicroResult[] {
  const roundMs = quick ? 200 : 1000;
  const rounds = quick ? 3 : 5;
  const out = [parseCases, headerCases, redactionCases, auditCases].flatMap((cases) =>
    cases(roundMs, rounds),
  );
  use(sink);
  return out;
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  process.stdout.write(JSON.stringify(runMicro(quick)) + '\n');
}

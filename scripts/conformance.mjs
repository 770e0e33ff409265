// `npm run conformance`: start examples/conformance-server.ts on a free 127.0.0.1 port, run the official MCP
// conformance suite (@modelcontextprotocol/conformance, pinned in devDependencies) against it, stop it.
//
// Suites (each must pass, or the script exits 1):
//   1. `--requirements 2026-07-28`: every scenario that revision scores must pass (the tool's own exit code), and
//      so must these run-but-unscored pending scenarios: http-header-validation,
//      http-custom-header-server-validation, json-schema-2020-12 (checked here from their results).
//   2. the 2025-11-25 active suite (`--spec-version 2025-11-25`), judged by the tool against the documented
//      baseline scripts/conformance-baseline.yml (unexpected failures and stale baseline entries both fail).
//   3. the tasks extension (`io.modelcontextprotocol/tasks`): each of its scenarios run alone (`--scenario`; an
//      extension scenario runs at the 2026-07-28 wire), every check required to pass. SKIPPED is accepted only
//      where the suite itself skips (tasks-status-notifications: its harness is pending), and reported as such.
//
// Offline: the suite only talks to the local server. Node 20 needs scripts/conformance-hook.mjs (the package
// imports fs.globSync, which Node 22 added). Results are kept in CONFORMANCE_OUTPUT (default: a temp dir).
// Arguments: `modern`, `legacy` or `tasks` runs one suite only.
import { spawn } from 'node:child_process';
import console from 'node:console';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const hook = join(root, 'scripts/conformance-hook.mjs');
const baseline = join(root, 'scripts/conformance-baseline.yml');
const PENDING_REQUIRED = [
  'http-header-validation',
  'http-custom-header-server-validation',
  'json-schema-2020-12',
];

/** The tasks extension's scenarios, and those the suite itself skips (whose SKIPPED is accepted). */
const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];
const TASKS_SKIPPED_BY_SUITE = ['tasks-status-notifications'];
const SUITES = ['modern', 'legacy', 'tasks'];

const only = process.argv[2];
if (only !== undefined && !SUITES.includes(only)) {
  console.error(
    `conformance: unknown argument ${JSON.stringify(only)} (expected "modern", "legacy" or "tasks")`,
  );
  process.exit(2);
}
const runs = (suite) => only === undefined || only === suite;
if (!existsSync(cli)) {
  console.error('conformance: @modelcontextprotocol/conformance is not installed (npm ci installs it)');
  process.exit(2);
}
const outRoot = process.env.CONFORMANCE_OUTPUT || mkdtempSync(join(tmpdir(), 'mcpware-conformance-'));

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/** Start the server; resolves with the child once it printed its "listening" line. */
function startServer(port) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'examples/conformance-server.ts')], {
      cwd: root,
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      rej(new Error(`the conformance server did not start within 60 s:\n${out}`));
    }, 60_000);
    const onData = (chunk) => {
      out += chunk;
      if (out.includes('conformance server listening on')) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.resume();
        res(child);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (c) => {
      out += c;
      process.stderr.write(c);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`the conformance server exited (code ${code}) before it was ready:\n${out}`));
    });
  });
}

function stopServer(child) {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res();
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      res();
    });
    child.kill('SIGTERM');
  });
}

/** Run the conformance CLI; resolves with its exit code. Its output goes to ours. */
function runSuite(args) {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', hook, cli, ...args], { cwd: root, stdio: 'inherit' });
    child.once('exit', (code, signal) => res(code ?? (signal ? 1 : 0)));
  });
}

/** Per scenario (latest run in `dir`): passed when no check is a FAILURE. */
function readResults(dir) {
  const out = new Map();
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name);
    if (!m) continue;
    const file = join(dir, name, 'checks.json');
    if (!existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8'));
    const failed = checks.filter((c) => c.status === 'FAILURE').map((c) => c.id);
    const warnings = checks.filter((c) => c.status === 'WARNING').map((c) => c.id);
    const skipped = checks.filter((c) => c.status === 'SKIPPED').map((c) => c.id);
    const succeeded = checks.filter((c) => c.status === 'SUCCESS').length;
    out.set(m[1], {
      passed: failed.length === 0,
      failed,
      warnings,
      skipped,
      succeeded,
      total: checks.length,
    });
  }
  return out;
}

/**
 * The tasks suite's verdict: a scenario passes when it ran, the tool exited 0, and every check is SUCCESS, or
 * SKIPPED in a scenario the suite itself skips. Returns the count passed and the summary's lines.
 */
function judgeTasks(results, codes) {
  const lines = [];
  let passed = 0;
  for (const name of TASKS_SCENARIOS) {
    const r = results.get(name);
    if (!r) {
      lines.push(`  ✗ ${name}: not run (tool exit code ${codes.get(name)})`);
      continue;
    }
    const skipOk = TASKS_SKIPPED_BY_SUITE.includes(name);
    const bad = [...r.failed, ...r.warnings.map((w) => `${w} (warning)`)];
    if (!skipOk) bad.push(...r.skipped.map((k) => `${k} (skipped)`));
    if (r.succeeded + r.skipped.length < r.total) bad.push('a check neither passed nor skipped');
    if (r.total === 0) bad.push('no checks');
    if (codes.get(name) !== 0) bad.push(`tool exit code ${codes.get(name)}`);
    if (bad.length > 0) {
      lines.push(`  ✗ ${name}: ${bad.join(', ')}`);
      continue;
    }
    passed++;
    if (r.skipped.length > 0)
      lines.push(
        `  ~ ${name}: skipped by the conformance suite itself, accepted (${r.skipped.length} SKIPPED, ${r.succeeded} passed)`,
      );
  }
  return { passed, lines };
}

const summary = [];
let ok = true;
const port = await freePort();
const url = `http://127.0.0.1:${port}/mcp`;
console.log(`conformance: starting the server on ${url}; results in ${outRoot}`);
const server = await startServer(port);
try {
  if (runs('modern')) {
    const dir = join(outRoot, 'modern');
    console.log('\nconformance: 2026-07-28 requirements (+ the pending scenarios it runs unscored)\n');
    const code = await runSuite(['server', '--url', url, '--requirements', '2026-07-28', '-o', dir]);
    const results = readResults(dir);
    // The frozen requirement set names what is scored; everything else it runs is reported apart.
    const req = parseYaml(
      readFileSync(
        join(root, 'node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml'),
        'utf8',
      ),
    );
    const scored = req.server ?? [];
    const extensions = (req.not_scored ?? [])
      .filter((e) => e.leg === 'server' && e.reason === 'extension')
      .map((e) => e.scenario);
    const count = (names) => `${names.filter((n) => results.get(n)?.passed).length} of ${names.length}`;
    const pendingBad = PENDING_REQUIRED.filter((s) => !results.get(s)?.passed);
    summary.push(
      `2026-07-28 requirements: scored ${count(scored)} passed (tool exit code ${code}); ` +
        `pending, required here ${count(PENDING_REQUIRED)} passed; ` +
        `extension, not scored here (the tasks suite requires its own) ${count(extensions)} passed`,
    );
    for (const [name, r] of results) {
      if (!r.passed && !extensions.includes(name)) summary.push(`  ✗ ${name}: ${r.failed.join(', ')}`);
    }
    const missing = [...scored, ...PENDING_REQUIRED].filter((n) => !results.has(n));
    if (missing.length > 0) summary.push(`  ✗ not run: ${missing.join(', ')}`);
    if (code !== 0 || pendingBad.length > 0 || missing.length > 0) ok = false;
  }
  if (runs('legacy')) {
    const dir = join(outRoot, 'legacy');
    console.log('\nconformance: 2025-11-25 active suite against scripts/conformance-baseline.yml\n');
    const code = await runSuite([
      'server',
      '--url',
      url,
      '--spec-version',
      '2025-11-25',
      '--expected-failures',
      baseline,
      '-o',
      dir,
    ]);
    const results = readResults(dir);
    const all = [...results.values()];
    summary.push(
      `2025-11-25 active suite: ${all.filter((r) => r.passed && r.warnings.length === 0).length} of ${all.length} scenarios passed cleanly` +
        ` (tool exit code ${code} against the baseline)`,
    );
    for (const [name, r] of results) {
      if (!r.passed || r.warnings.length > 0)
        summary.push(`  ~ ${name}: ${[...r.failed, ...r.warnings.map((w) => `${w} (warning)`)].join(', ')}`);
    }
    if (code !== 0) ok = false;
  }
  if (runs('tasks')) {
    const dir = join(outRoot, 'tasks');
    console.log('\nconformance: the tasks extension (io.modelcontextprotocol/tasks), scenario by scenario\n');
    const codes = new Map();
    for (const name of TASKS_SCENARIOS)
      codes.set(name, await runSuite(['server', '--url', url, '--scenario', name, '-o', dir]));
    const { passed, lines } = judgeTasks(readResults(dir), codes);
    summary.push(`tasks extension: ${passed}/${TASKS_SCENARIOS.length}`, ...lines);
    if (passed !== TASKS_SCENARIOS.length) ok = false;
  }
} finally {
  await stopServer(server);
}
console.log('\n=== mcpware conformance ===');
for (const line of summary) console.log(line);
console.log(ok ? 'conformance: OK' : 'conformance: FAILED');
process.exit(ok ? 0 : 1);

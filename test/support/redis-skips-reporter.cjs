// jest reporter: the one line of a run that skipped Redis test files for want of a Redis (test/support/redis.ts
// notes each such file in the directory redis-run-setup.cjs makes). The tests it counts are the ones jest counts
// as skipped in those files, so the line and jest's summary agree.
const fs = require('node:fs');

class RedisSkipsReporter {
  onRunComplete(_contexts, results) {
    const dir = process.env.MCPWARE_REDIS_SKIPS;
    if (!dir || !fs.existsSync(dir)) return;
    const noted = new Set(fs.readdirSync(dir).map((name) => fs.readFileSync(`${dir}/${name}`, 'utf8')));
    if (noted.size === 0) return;
    let tests = 0;
    let files = 0;
    for (const file of results.testResults) {
      if (!noted.has(file.testFilePath)) continue;
      const skipped = file.testResults.filter((t) => t.status === 'pending' || t.status === 'skipped').length;
      if (skipped === 0) continue;
      tests += skipped;
      files++;
    }
    if (tests === 0) return;
    const what = `${tests} ${tests === 1 ? 'test' : 'tests'} in ${files} ${files === 1 ? 'file' : 'files'}`;
    const hint = process.env.REDIS_URL
      ? 'install redis-server (apt install redis-server): they need one of their own, not REDIS_URL'
      : 'install redis-server (apt install redis-server) or set REDIS_URL';
    process.stderr.write(`redis-server not found: ${what} skipped; ${hint}\n`);
  }
}

module.exports = RedisSkipsReporter;

// jest globalTeardown: the one line of a run that skipped Redis test files (see redis-run-setup.cjs).
const fs = require('node:fs');

module.exports = function redisRunTeardown() {
  const dir = process.env.MCPWARE_REDIS_SKIPS;
  if (!dir || !fs.existsSync(dir)) return;
  const skipped = fs.readdirSync(dir).length;
  fs.rmSync(dir, { recursive: true, force: true });
  if (skipped === 0) return;
  const files = skipped === 1 ? '1 Redis test file' : `${skipped} Redis test files`;
  const hint = process.env.REDIS_URL
    ? 'install redis-server (apt install redis-server): they need one of their own, not REDIS_URL'
    : 'install redis-server (apt install redis-server) or set REDIS_URL';
  process.stderr.write(`redis-server not found: ${files} skipped; ${hint}\n`);
};

// jest globalSetup: a directory where test files skipped for want of Redis note themselves (test/support/redis.ts),
// so that the run ends with one line about them (redis-run-teardown.cjs) instead of one per file.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

module.exports = function redisRunSetup() {
  process.env.MCPWARE_REDIS_SKIPS = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpware-redis-skips-'));
};

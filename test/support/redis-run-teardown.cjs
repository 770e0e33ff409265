// jest globalTeardown: removes the directory of the notes of Redis test files skipped in this run (see
// redis-run-setup.cjs); redis-skips-reporter.cjs has already written the run's one line about them.
const fs = require('node:fs');

module.exports = function redisRunTeardown() {
  const dir = process.env.MCPWARE_REDIS_SKIPS;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
};

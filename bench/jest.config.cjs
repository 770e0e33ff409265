/** @type {import('jest').Config} The benchmark harness's own tests: `npm run bench:test`. */
module.exports = {
  ...require('../jest.config.cjs'),
  rootDir: '..',
  roots: ['<rootDir>/bench/test'],
};

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  // jose 6 ships ESM only; let ts-jest turn it into CommonJS for jest's runtime. The OTLP exporters' transport
  // loads node:http with a dynamic import(), which jest's CommonJS runtime refuses; compiled, it is a require().
  transformIgnorePatterns: ['/node_modules/(?!(jose|@opentelemetry/otlp-exporter-base)/)'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 20000,
  // Redis test files skip themselves without a Redis (except under CI=true); the run then ends with one line
  // saying how many tests that skipped, as jest counts them (test/support/redis.ts, redis-skips-reporter.cjs).
  globalSetup: '<rootDir>/test/support/redis-run-setup.cjs',
  globalTeardown: '<rootDir>/test/support/redis-run-teardown.cjs',
  reporters: ['default', '<rootDir>/test/support/redis-skips-reporter.cjs'],
  // The library's "[mcpware] …" stderr lines are silent unless MCP_TEST_LOGS=1 (test/support/quiet-logs.cjs).
  setupFiles: ['<rootDir>/test/support/quiet-logs.cjs'],
};

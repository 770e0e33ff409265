/**
 * mcpware/testing: helpers for the tests of a server built on mcpware. Not for production code.
 */
export { TestIssuer } from './issuer.js';
export type { OutageMode, SignOptions, TestAlg, TestIssuerOptions } from './issuer.js';
export * from './client.js';

/**
 * @module mcpware/testing: helpers for the tests of a server built on mcpware (a loopback OpenID provider and
 * an MCP client that can break one thing on purpose). Not for production code.
 *
 * @see docs/guides/testing.md
 */
export { TestIssuer } from './issuer.js';
export type { OutageMode, SignOptions, TestAlg, TestIssuerOptions } from './issuer.js';
export { McpTestClient, parseSse } from './client.js';
export type { Era, McpResponse, McpTestClientOptions, RequestOptions } from './client.js';

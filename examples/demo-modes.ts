/**
 * The demo's three modes: mcpware's own dispatcher (the default), the same tools written with the official SDK
 * v2 and served in this process behind the stack (`MCP_BACKEND=sdk`), or any MCP server over HTTP behind the
 * stack (`MCP_UPSTREAM_URL`, e.g. `npm run example:upstream`). In the two new modes the tools are not
 * mcpware's, so the visibility rule (`admin_report` for the group admin only) is the tool filter's `groups`.
 * @see docs/guides/demo-server.md#modes
 */
import { type Logger, type ToolFilterOptions, proxy, sdk } from '../index.js';
import type { McpEndpointBackend } from '../middleware/endpoint/index.js';
import {
  ADMIN_GROUP,
  ADMIN_REPORT,
  CRASH,
  CUSTOMER,
  HELLO,
  NOTE,
  REGION_STATUS,
  SLOW,
} from './demo-contract.js';
import { sdkDemoHandler } from './sdk-demo-tools.js';

export type DemoMode = 'dispatch' | 'sdk' | 'upstream';

/** The mode the environment asks for: MCP_BACKEND (`dispatch`, the default, or `sdk`) or MCP_UPSTREAM_URL. */
export function demoModeFromEnv(env: Readonly<Record<string, string | undefined>>): {
  mode: DemoMode;
  upstreamUrl?: string;
} {
  const backend = env.MCP_BACKEND || 'dispatch';
  if (backend !== 'dispatch' && backend !== 'sdk') {
    throw new TypeError(`MCP_BACKEND must be "dispatch" or "sdk", got ${JSON.stringify(backend)}`);
  }
  const url = env.MCP_UPSTREAM_URL;
  if (url === undefined || url === '') return { mode: backend };
  if (backend === 'sdk') throw new TypeError('MCP_BACKEND=sdk and MCP_UPSTREAM_URL are exclusive: set one');
  return { mode: 'upstream', upstreamUrl: url };
}

/**
 * The tool filter of the two new modes: the contract's tools only (a name the server does not list is refused by
 * mcpware exactly as a hidden one is), `admin_report` for the group admin only.
 */
export const DEMO_TOOL_FILTER: ToolFilterOptions = {
  allow: [HELLO, CUSTOMER, SLOW, ADMIN_REPORT, REGION_STATUS, CRASH, NOTE].map((t) => t.name),
  groups: { [ADMIN_REPORT.name]: [ADMIN_GROUP] },
};

export interface DemoBackend {
  backend: McpEndpointBackend;
  /** Ends what the backend holds besides its exchanges (the SDK handler's listen streams). */
  close(): Promise<void>;
}

/** The backend of a new mode: `sdk()` over the SDK tools in this process, or `proxy()` to the upstream. */
export async function demoBackend(
  mode: Exclude<DemoMode, 'dispatch'>,
  o: { upstreamUrl?: string; pageSize: number; logger: Logger },
): Promise<DemoBackend> {
  const paging = o.pageSize > 0 ? { pageSize: o.pageSize } : {};
  if (mode === 'upstream') {
    // The upstream is reached with its own credentials (none here); the caller's Authorization never goes there.
    const backend = proxy({ url: o.upstreamUrl!, logger: o.logger, ...paging });
    return { backend, close: async () => {} };
  }
  const handler = await sdkDemoHandler({
    onError: (err) =>
      o.logger.error('sdk demo: a tool failed', { error: String((err as Error)?.stack ?? err) }),
  });
  return { backend: sdk({ handler, logger: o.logger, ...paging }), close: () => handler.close() };
}

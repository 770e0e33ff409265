/**
 * `otel()` in front of the full stack (first, as `mcpEndpoint({ otel })` mounts it), for the OpenTelemetry
 * variants: `mcpware-node-otel-nosdk` (no SDK registered) and `mcpware-node-otel` (bench/servers/otel-sdk.ts).
 */
import { otel } from '../../middleware/otel/index.js';
import type { StatsProvider } from './common.js';
import type { Stack } from './stack.js';

/** The stack with `otel()` in front of it (the global providers: none registered, or the bench's SDK). */
export function withOtel(stack: Stack, extraStats: StatsProvider = () => ({})): Stack {
  return {
    middlewares: [otel(), ...stack.middlewares],
    stats: async () => ({ ...(await stack.stats()), ...(await extraStats()) }),
  };
}

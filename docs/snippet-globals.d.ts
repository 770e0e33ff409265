/**
 * Placeholders the docs snippets share: the application's own objects, which a snippet uses but does not build.
 * `scripts/docs-check.mjs` compiles every ```ts block of README.md and docs/ together with this file.
 */
import type { Express } from 'express';
import type { ApiKeyConfig } from 'mcpware/api-key-auth';
import type { ResourceSource } from 'mcpware/resources';

declare global {
  /** An Express application. */
  const app: Express;
  /** API keys, as `apiKeyAuth({ keys })` takes them. */
  const keys: ApiKeyConfig[];
  /** A bearer token. */
  const token: string;
  /** A resource source of the application's. */
  const catalogueSource: ResourceSource;
  /** A file watcher. */
  const watcher: { on(event: string, listener: (path: string) => void): void };
  /** The application's cache, database and domain functions. */
  const cache: { clear(options: { signal: AbortSignal }): Promise<number> };
  const clickhouse: { query(sql: string): Promise<unknown[]> };
  const sql: string;
  const shards: { name: string }[];
  function rebuild(shard: { name: string }, options: { signal: AbortSignal }): Promise<void>;
  const projects: { delete(id: string): Promise<void> };
  function forecast(city: string): Promise<unknown>;
  const CITIES: string[];
}

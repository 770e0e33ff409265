/**
 * The demo's notes: a text resource `notes://today` and a tool `note {text}` that appends a line to it and
 * announces `notifications/resources/updated` for that URI. Without Redis the notes live in this process; with
 * Redis they live in a list there, so every instance reads the same text, and the announcement goes through a
 * Redis change feed, so it reaches the listen streams of every instance; that feed also passes legacy
 * cancellations between the instances (dispatch's `cancellation.relay`).
 */
import type { Cluster, Redis } from 'ioredis';
import {
  ChangeFeed,
  redisChangeFeed,
  ok,
  toolError,
  type RedisChangeFeed,
  type RedisPubSubClient,
  type Logger,
  type ResourceSource,
  type Tool,
} from '../index.js';

import { NOTE, NOTES_UNAVAILABLE, NOTES_URI, noteLine } from './demo-contract.js';

export { NOTES_URI };
/** Most lines kept: the oldest go first. */
const MAX_NOTES = 1000;
const NOTES_KEY = 'mcpware:demo:notes:today';
/** The channel of the demo's resources feed. */
const NOTES_CHANNEL = 'mcpware:demo:resources';

interface NotesStore {
  lines(): Promise<string[]>;
  append(line: string): Promise<void>;
}

function memoryNotes(): NotesStore {
  const lines: string[] = [];
  return {
    lines: async () => [...lines],
    async append(line) {
      lines.push(line);
      if (lines.length > MAX_NOTES) lines.splice(0, lines.length - MAX_NOTES);
    },
  };
}

function redisNotes(redis: Redis | Cluster): NotesStore {
  return {
    lines: () => redis.lrange(NOTES_KEY, 0, -1),
    async append(line) {
      await redis.multi().rpush(NOTES_KEY, line).ltrim(NOTES_KEY, -MAX_NOTES, -1).exec();
    },
  };
}

export interface DemoNotes {
  /** The resources feed: `resources({ changes })`. */
  feed: ChangeFeed;
  /** With Redis, the shared feed: `dispatch({ cancellation: { relay } })`, so a cancel reaches any instance. */
  relay: RedisChangeFeed | undefined;
  source: ResourceSource;
  tool: Tool;
  /** Whether the shared feed is subscribed and able to publish; undefined without Redis. */
  connected(): boolean | undefined;
  close(): Promise<void>;
}

/**
 * The notes, in `redis` when given (the client the limits use: one node, or a Redis Cluster, where the notes'
 * one key lives on the node serving its slot), in memory otherwise.
 */
export function demoNotes(redis: Redis | Cluster | undefined, logger: Logger): DemoNotes {
  const store = redis ? redisNotes(redis) : memoryNotes();
  const shared = redis
    ? redisChangeFeed({ redis: redis as RedisPubSubClient, channel: NOTES_CHANNEL, logger })
    : undefined;
  const feed = shared ?? new ChangeFeed();
  const entry = { uri: NOTES_URI, name: 'today', title: "Today's notes", mimeType: 'text/plain' };
  const source: ResourceSource = {
    list: () => [entry],
    entry: (uri) => (uri === NOTES_URI ? entry : undefined),
    read: async (uri) => {
      if (uri !== NOTES_URI) return undefined;
      const lines = await store.lines();
      return { text: lines.map((l) => `${l}\n`).join(''), mimeType: 'text/plain' };
    },
  };
  const tool: Tool = {
    ...NOTE,
    call: async ({ text }) => {
      const line = noteLine(text);
      try {
        await store.append(line);
      } catch {
        return toolError(NOTES_UNAVAILABLE);
      }
      feed.updated(NOTES_URI);
      return ok({ noted: line });
    },
  };
  return {
    feed,
    relay: shared,
    source,
    tool,
    connected: () => shared?.stats().connected,
    close: async () => {
      await shared?.close();
    },
  };
}

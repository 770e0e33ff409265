/**
 * Change feeds: how a registry or a source tells `dispatch()` that its list changed or a resource was updated, so
 * the open `subscriptions/listen` streams that asked for it get `notifications/…/list_changed` or
 * `notifications/resources/updated`.
 *
 * A `ToolRegistry` owns one (register/remove announce themselves). `resources()` and `prompts()` take one as their
 * `changes` option: your code calls `feed.listChanged()` / `feed.updated(uri)` when its data changes. The handler
 * objects expose their feed under the {@link CHANGES} symbol, which no JSON-RPC method name can reach.
 *
 * `redisChangeFeed()` is a feed whose announcements reach the listen streams of every replica sharing a Redis;
 * it is also a {@link CancellationRelay}, passing dispatch()'s legacy cancellations between the replicas.
 *
 * @see docs/handlers/changes.md
 */
export { CHANGES, ChangeFeed, changesOf, isChangeFeed } from '../../core/change-feed.js';
export type {
  CancellationMessage,
  CancellationRelay,
  ChangeEvent,
  ChangeListener,
} from '../../core/change-feed.js';
export { redisChangeFeed } from './redis.js';
export type {
  RedisChangeFeed,
  RedisChangeFeedOptions,
  RedisChangeFeedStats,
  RedisPubSubClient,
  RedisSubscriberLike,
} from './redis.js';
export type { WireDropReason as ChangeFeedDropReason } from './wire.js';

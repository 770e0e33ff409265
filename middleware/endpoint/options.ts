/**
 * The options of `mcpEndpoint()` and their first check: the top level and every section's own names. What a
 * section holds is checked by the factory it is passed to (`limits: {...}` by `limits()`, `dispatch: {...}` by
 * `dispatch()`), so the message names that factory and the option; here only the sections themselves, the
 * names moved to another section, and the choice of who may call are decided.
 * @see docs/middleware/endpoint.md
 */
import type { Registry } from 'prom-client';
import type { Handlers } from '../../core/contract.js';
import type { ApiKeyAuthOptions, ApiKeyConfig } from '../api-key-auth/index.js';
import type { AuditOptions } from '../audit/index.js';
import { CHALLENGE_OPTIONS, type ChallengeOptions } from '../auth/challenge.js';
import type { DispatchOptions } from '../dispatch/index.js';
import type { GuardOriginOptions } from '../guard-origin/index.js';
import type { BodyOptions } from '../../core/parse-step.js';
import {
  OPTION_ERRORS,
  badOption,
  boolOption,
  knownKeys,
  loggerOption,
  missingOption,
  movedKeys,
  optionError,
  optionsObject,
} from '../../core/options.js';
import { stderrLogger } from '../../core/respond.js';
import type { LimitsOptions } from '../limits/index.js';
import type { MetricsOptions } from '../metrics/index.js';
import type { OidcAuthOptions } from '../oidc-auth/index.js';
import type { ProtectedResourceMetadataOptions } from '../protected-resource-metadata/index.js';
import type { RedactMiddlewareOptions } from '../redact/index.js';
import type { ToolFilterOptions } from '../tool-filter/index.js';
import type { Logger, Middleware } from '../../core/types.js';
import { type McpEndpointBackend, backendOption } from './backend.js';

export const FACTORY = 'mcpEndpoint';

/** Who may call: API keys, OIDC issuers, or both; `insecureNoAuth` for development only. */
export interface McpEndpointAuthOptions extends ChallengeOptions {
  /** The API keys (`[{ userId, hash, groups }]`), or `apiKeyAuth()`'s options (`{ keys, ... }`). */
  apiKeys?: readonly ApiKeyConfig[] | ApiKeyAuthOptions;
  /** One issuer's `oidcAuth()` options, or a list of them (one authenticator per issuer). */
  oidc?: OidcAuthOptions | readonly OidcAuthOptions[];
  /**
   * The RFC 9728 document (`protectedResourceMetadata()`'s options), served by the endpoint's
   * `resourceMetadata` middleware at the app's root. With authorization servers listed, the 401 challenge
   * names its URL (unless `resourceMetadataUrl` is set).
   */
  resourceMetadata?: ProtectedResourceMetadataOptions;
  /**
   * Development only: serve every request unauthenticated. Default `false`: without `apiKeys` or `oidc`,
   * `mcpEndpoint()` throws, so a typo in a configuration never means "no protection".
   */
  insecureNoAuth?: boolean;
}

/**
 * The dispatcher's options, without those the endpoint takes elsewhere (`handlers`, `logger`, `body`, and
 * `anonymous`, which is `auth.insecureNoAuth`). Its `versions` also configure `classifyRevision()` and
 * `checkHeaders()`.
 */
export type McpEndpointDispatchOptions = Omit<DispatchOptions, 'handlers' | 'logger' | 'body' | 'anonymous'>;

export interface McpEndpointOptions {
  /** Who may call. Required. */
  auth: McpEndpointAuthOptions;
  /**
   * The handler objects: `tools`, `resources`, `prompts`, `completion`, … (`dispatch()`'s `handlers`). Required
   * unless `backend` is given.
   */
  handlers?: Handlers;
  /**
   * `dispatch()`'s options: `serverInfo` (required), `instructions`, `capabilities`, `versions`, `streams`, …
   * Required unless `backend` is given.
   */
  dispatch?: McpEndpointDispatchOptions;
  /**
   * A terminal middleware of mcpware's in place of `dispatch()` and `handlers`: `sdk({ handler })` (an official
   * SDK server in the same process) or `proxy({ url })` (any MCP server over HTTP). Its `close()` is called by
   * the endpoint's `close()`.
   */
  backend?: McpEndpointBackend;
  /** `toolFilter()`'s options: an allow-list, overrides and per-group visibility. Default: no filter. */
  toolFilter?: ToolFilterOptions;
  /** `guardOrigin()`'s allow-lists. Default: no Origin allowed, no Host check. */
  origin?: GuardOriginOptions;
  /** The body's size limit and depth, for `rejectBatch()`, `parse()` and `dispatch()` alike. */
  body?: BodyOptions;
  /** `limits()`'s options. Default: its defaults; `false`: no limits. */
  limits?: LimitsOptions | false;
  /** `redact()`'s options. Default: mask every rule; `false`: no redaction. */
  redact?: RedactMiddlewareOptions | false;
  /** `audit()`'s options (its winston `logger` is required). Default: no audit. */
  audit?: AuditOptions;
  /** `metrics()`'s options, or `true` for its defaults. Default: no metrics, unless `registry` is given. */
  metrics?: MetricsOptions | boolean;
  /** The prom-client Registry for the metrics (turns them on). */
  registry?: Registry;
  /**
   * An `otel()` middleware (from `mcpware/otel`): OpenTelemetry spans and `mcp.server.operation.duration`,
   * mounted first (before audit and metrics). The endpoint never imports `mcpware/otel` itself: an
   * application that does not trace never loads it. Default: none (`false` too).
   */
  otel?: Middleware | false;
  /** Where every part logs (each section's own `logger` wins). Default: stderr. */
  logger?: Logger;
}

const TOP = [
  'auth',
  'handlers',
  'dispatch',
  'backend',
  'toolFilter',
  'origin',
  'body',
  'limits',
  'redact',
  'audit',
  'metrics',
  'registry',
  'otel',
  'logger',
] as const;
const AUTH = ['apiKeys', 'oidc', 'resourceMetadata', 'insecureNoAuth', ...CHALLENGE_OPTIONS] as const;
/** Names a user may look for in the dispatch section, and where the endpoint takes them. */
const MOVED_FROM_DISPATCH: ReadonlyMap<string, string> = new Map([
  ['handlers', 'handlers'],
  ['logger', 'logger'],
  ['body', 'body'],
  ['limit', 'body.limit'],
  ['maxDepth', 'body.maxDepth'],
  ['anonymous', 'auth.insecureNoAuth'],
]);

/** A section that must be an object when given; `undefined` when absent. */
function section<T extends object>(name: string, value: T | undefined): T | undefined {
  return value === undefined ? undefined : optionsObject(FACTORY, value, `option "${name}"`);
}

/** A middleware given whole (`otel`): a function, or `false`/absent for none. */
function middlewareOption(name: string, value: unknown): Middleware | undefined {
  if (value === false || value === undefined) return undefined;
  if (typeof value !== 'function')
    throw badOption(FACTORY, name, value, 'a middleware (e.g. otel() from mcpware/otel) or false');
  return value as Middleware;
}

/** A section that is on by default: `false` turns it off, `true` or absent is `{}`. */
function switchable<T extends object>(name: string, value: T | boolean | undefined): T | undefined {
  if (value === false) return undefined;
  if (value === true || value === undefined) return {} as T;
  return optionsObject(FACTORY, value, `option "${name}"`);
}

/** The authentication choice, checked: at least one authenticator, or the explicit development flag. */
export interface AuthChoice {
  readonly apiKeys: ApiKeyAuthOptions | undefined;
  readonly oidc: readonly OidcAuthOptions[];
  readonly challenge: ChallengeOptions;
  readonly resourceMetadata: ProtectedResourceMetadataOptions | undefined;
  readonly insecure: boolean;
}

function resolveAuth(value: McpEndpointAuthOptions | undefined): AuthChoice {
  const REQUIRED =
    '{ apiKeys } and/or { oidc } (or { insecureNoAuth: true } in development), so a missing ' +
    'or misspelt section never means "no protection"';
  if (value === undefined) throw missingOption(FACTORY, 'auth', REQUIRED);
  const a = optionsObject(FACTORY, value, 'option "auth"');
  knownKeys(FACTORY, a, AUTH, 'auth.');
  const insecure = boolOption(FACTORY, 'auth.insecureNoAuth', a.insecureNoAuth, false);
  let apiKeys: ApiKeyAuthOptions | undefined;
  if (Array.isArray(a.apiKeys)) apiKeys = { keys: a.apiKeys as readonly ApiKeyConfig[] };
  else if (a.apiKeys !== undefined)
    apiKeys = optionsObject(FACTORY, a.apiKeys as ApiKeyAuthOptions, 'option "auth.apiKeys"');
  const oidcList: readonly unknown[] =
    a.oidc === undefined ? [] : Array.isArray(a.oidc) ? (a.oidc as readonly unknown[]) : [a.oidc];
  const oidc = oidcList.map((v) => optionsObject(FACTORY, v as OidcAuthOptions, 'option "auth.oidc"'));
  const some = apiKeys !== undefined || oidc.length > 0;
  if (some && insecure) {
    throw badOption(FACTORY, 'auth.insecureNoAuth', true, 'left out when apiKeys or oidc is configured');
  }
  if (!some && !insecure) throw missingOption(FACTORY, 'auth', REQUIRED);
  const challenge: ChallengeOptions = {};
  for (const k of CHALLENGE_OPTIONS) if (a[k] !== undefined) Object.assign(challenge, { [k]: a[k] });
  return {
    apiKeys,
    oidc,
    challenge,
    resourceMetadata: section('auth.resourceMetadata', a.resourceMetadata),
    insecure,
  };
}

/** The endpoint's options with every section checked as a section. */
/** What answers: `dispatch()` over handler objects, or a backend such as `sdk()` or `proxy()`. */
export type Terminal =
  | { readonly kind: 'dispatch'; readonly handlers: Handlers; readonly dispatch: McpEndpointDispatchOptions }
  | { readonly kind: 'backend'; readonly backend: McpEndpointBackend };

export interface EndpointConfig {
  readonly auth: AuthChoice;
  readonly terminal: Terminal;
  readonly toolFilter: ToolFilterOptions | undefined;
  readonly origin: GuardOriginOptions;
  readonly body: BodyOptions;
  readonly limits: LimitsOptions | undefined;
  readonly redact: RedactMiddlewareOptions | undefined;
  readonly audit: AuditOptions | undefined;
  readonly metrics: MetricsOptions | undefined;
  readonly otel: Middleware | undefined;
  readonly logger: Logger;
}

/** Metrics are on with a `metrics` section (or `true`) or a `registry`; the registry is named once. */
function resolveMetrics(
  value: MetricsOptions | boolean | undefined,
  registry: Registry | undefined,
): MetricsOptions | undefined {
  if (value === false) {
    if (registry !== undefined) throw badOption(FACTORY, 'metrics', false, 'left out when registry is given');
    return undefined;
  }
  if (value === undefined && registry === undefined) return undefined;
  const m = value === undefined || value === true ? {} : optionsObject(FACTORY, value, 'option "metrics"');
  if (registry === undefined) return m;
  if (Object.hasOwn(m, 'registry')) {
    throw optionError(
      OPTION_ERRORS.invalid,
      FACTORY,
      `${FACTORY}: option metrics."registry" and option "registry" both given; give one`,
    );
  }
  return { ...m, registry };
}

/** `dispatch` and `handlers`, or `backend` alone. */
function resolveTerminal(o: McpEndpointOptions): Terminal {
  if (o.backend !== undefined) {
    for (const name of ['handlers', 'dispatch'] as const) {
      if (o[name] !== undefined) {
        throw optionError(
          OPTION_ERRORS.invalid,
          FACTORY,
          `${FACTORY}: option "backend" answers every request in place of dispatch(), so option "${name}" ` +
            'has nothing to configure: give "backend", or "handlers" and "dispatch"',
        );
      }
    }
    return { kind: 'backend', backend: backendOption(o.backend) };
  }
  const dispatch = section('dispatch', o.dispatch);
  if (dispatch === undefined) {
    throw missingOption(
      FACTORY,
      'dispatch',
      'at least { serverInfo: { name, version } } (or a "backend" such as sdk() or proxy())',
    );
  }
  movedKeys(FACTORY, dispatch, MOVED_FROM_DISPATCH, 'dispatch.');
  if (o.handlers === undefined) {
    throw missingOption(FACTORY, 'handlers', 'the handler objects, e.g. { tools }');
  }
  return { kind: 'dispatch', dispatch, handlers: optionsObject(FACTORY, o.handlers, 'option "handlers"') };
}

export function resolveEndpointOptions(options: McpEndpointOptions): EndpointConfig {
  const o = optionsObject(FACTORY, options);
  knownKeys(FACTORY, o, TOP);
  const logger = loggerOption(FACTORY, o.logger, stderrLogger);
  return {
    auth: resolveAuth(o.auth),
    terminal: resolveTerminal(o),
    toolFilter: section('toolFilter', o.toolFilter),
    origin: section('origin', o.origin) ?? {},
    body: section('body', o.body) ?? {},
    limits: switchable('limits', o.limits),
    redact: switchable('redact', o.redact),
    audit: section('audit', o.audit),
    metrics: resolveMetrics(o.metrics, o.registry),
    otel: middlewareOption('otel', o.otel),
    logger,
  };
}

/** `section` with the endpoint's logger when it sets none of its own. */
export function withLogger<T extends { logger?: unknown }>(s: T, logger: Logger): T {
  return s.logger === undefined ? { ...s, logger } : s;
}

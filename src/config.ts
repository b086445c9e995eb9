import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';
import { TOKEN_VARIABLES, type ServiceTokens, type TokenClass } from './http/auth.js';

/**
 * Environment → typed config. This is the only module that knows about the `VERDICT_` / `REVIEWBOT_`
 * prefix fallback. Every function takes `env` as a parameter so tests pass a plain object.
 */
export type Env = Record<string, string | undefined>;

export const CANONICAL_PREFIX = 'VERDICT_';
export const LEGACY_PREFIX = 'REVIEWBOT_';

/**
 * Nullish prefix fallback: `VERDICT_<name>` when it is set at all (even to an empty string), else
 * `REVIEWBOT_<name>`. An empty canonical value does NOT fall through to the legacy one.
 */
export function prefixed(env: Env, name: string): string | undefined {
  return env[CANONICAL_PREFIX + name] ?? env[LEGACY_PREFIX + name];
}

/** The name a user should fix when a prefixed variable is invalid: the one that actually supplied the value. */
function prefixedName(env: Env, name: string): string {
  return env[CANONICAL_PREFIX + name] !== undefined || env[LEGACY_PREFIX + name] === undefined
    ? CANONICAL_PREFIX + name
    : LEGACY_PREFIX + name;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * The one boolean rule of the configuration: `1` or `true` is on, `0` or `false` is off, unset or blank is
 * `fallback`; anything else stops start-up naming the variable. (`VERDICT_OPENROUTER_REQUIRE_FREE` keeps
 * its own fail-closed rule: only `0` turns the free-only guard off.)
 */
export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = blankToUndefined(prefixed(env, name))?.trim().toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigError(prefixedName(env, name), 'must be 0, 1, true or false');
}

function int(variable: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  const value = blankToUndefined(raw);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(variable, `must be an integer (got "${value}")`);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(variable, `must be an integer from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const logLevelSchema = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

export type GithubConfig = {
  appId: string | null;
  privateKey: string | null;
  /** True when App credentials exist: publication is live only then. */
  hasCredentials: boolean;
  webhookSecret: string | null;
  webhookProxyUrl: string | null;
  /** REST base URL: https://api.github.com, or the GHES / test host from GHE_HOST + GHE_PROTOCOL. */
  baseUrl: string;
  /** Web base URL for links in review bodies: https://github.com, or the GHES / test host. */
  webUrl: string;
  /**
   * `VERDICT_GITHUB_RETRIES` (default 3): retries of a GitHub request that failed with a server error, and
   * of one refused by a (secondary) rate limit, after the wait GitHub asks for.
   */
  requestRetries: number;
};

export type StoreConfig =
  | { client: 'sqlite'; filename: string }
  | { client: 'pg'; connectionString: string; poolMax: number; schema?: string };

/**
 * Where jobs live (review-engine 8, "Queue selection"): `store` is the job table of the application store
 * (PostgreSQL with DATABASE_URL, else the SQLite store file), enqueued in the same transaction as the
 * delivery; `sqlite` a separate SQLite queue file; `http` a remote Verdict's `/queue` routes; `memory` a
 * process-local queue that loses its jobs on exit.
 */
export type QueueSelection =
  | { kind: 'store' }
  | { kind: 'sqlite'; filename: string }
  | { kind: 'http'; url: string; token: string }
  | { kind: 'memory' };

export type WorkerConfig = {
  /** `VERDICT_WORKER_ID`, default the host name; the lease owner is `<id>:<pid>`. */
  id: string;
  /** `VERDICT_WORKER_MAX_JOBS` (default 1): jobs one worker process holds at once. */
  maxJobs: number;
  /** `VERDICT_WORKER_CONCURRENCY` (default 1), capped by maxJobs. */
  concurrency: number;
  /** Lease length: `VERDICT_QUEUE_LEASE_SECONDS`, else model timeout + validation timeout + 5 minutes. */
  leaseMs: number;
};

export type Config = {
  port: number;
  host: string;
  logLevel: z.infer<typeof logLevelSchema>;
  productName: string;
  checkName: string;
  store: StoreConfig;
  github: GithubConfig;
  dedupeTtlSeconds: number;
  botHandles: string[];
  competitorLogins: string[];
  /** `VERDICT_COMPETITOR_TRIGGERS_REVIEW=1`: a competitor's review or comment requests a review. */
  competitorTriggersReview: boolean;
  /**
   * `live` publishes to GitHub; `shadow` records what would have been published. Shadow without App
   * credentials, or with `VERDICT_PUBLISH_MODE=shadow`.
   */
  publishMode: 'live' | 'shadow';
  workerInline: boolean;
  workerId: string;
  worker: WorkerConfig;
  queue: QueueSelection;
  /** Static service tokens (operator-api 5.1); a missing class accepts nothing. */
  tokens: ServiceTokens;
  /** `VERDICT_PUBLIC_URL`: the base URL clients reach this server at (the `apiBaseUrl` of new API keys). */
  publicUrl: string | null;
  /** Largest webhook body accepted (GitHub caps payloads at 25 MB). */
  maxWebhookBytes: number;
  /**
   * `VERDICT_WEBHOOK_INFLIGHT_BYTES`: webhook body bytes held in memory at once over all requests
   * (default 100 MiB, four bodies at GitHub's cap); past it a webhook answers 503 `ingress_busy`.
   */
  webhookInflightBytes: number;
  /**
   * `VERDICT_REQUEST_TIMEOUT_MS`: the time a client has to send a whole request, headers and body
   * (default 10000, GitHub's own delivery timeout); past it the connection is answered 408 and closed.
   */
  requestTimeoutMs: number;
  /**
   * `VERDICT_OPERATOR_CACHE_MS`: how long an identical snapshot or PR-detail read is served from memory
   * (default 1000, 0 turns it off, at most the snapshot's 15 s `ttlSeconds`). Writes made by this process
   * to the tables those reads show drop the cache at once.
   */
  operatorCacheMs: number;
  review: ReviewConfig;
  scheduler: SchedulerConfig;
};

/** Scheduled jobs (review-engine 6.4) and the command bridge they run. */
export type SchedulerConfig = {
  /** `VERDICT_SCHEDULER` (default 1): the server runs the scheduled jobs; 0 leaves them to another process. */
  enabled: boolean;
  /**
   * `VERDICT_CRON_AUTHORITY`: `live` (default) claims and executes operator commands; `shadow` only plans
   * them (`dryRun: true`, `planned`), leaving every command queued.
   */
  authority: 'live' | 'shadow';
  /** `VERDICT_DELIVERY_RETENTION_DAYS` (default 30; 0 keeps every delivery): finished deliveries older are deleted. */
  deliveryRetentionDays: number;
  /** `VERDICT_WATCHDOG_ALERT_URL`: where watchdog messages are POSTed as JSON; unset (default) delivers none. */
  alertUrl: string | null;
};

/** How a review runs (review-engine 8; the context budget of the review issue). */
export type ReviewConfig = {
  /** `VERDICT_RUNNER_TIMEOUT_MS`: one model call (default 10 minutes). */
  timeoutMs: number;
  /** `VERDICT_RUNNER_SHADOW_TIMEOUT_MS`, else the smaller of the primary timeout and 120000 ms. */
  shadowTimeoutMs: number;
  /** `VERDICT_REVIEW_CHUNK_TOKENS` (default 60000): diff tokens per model call. */
  chunkTokens: number;
  /** `VERDICT_REVIEW_FILE_TOKENS` (default 12000): one file's diff before it is clipped. */
  fileTokens: number;
  /** `VERDICT_REVIEW_MAX_CHUNKS` (default 12): model calls per review; the rest is listed as not reviewed. */
  maxChunks: number;
  /** `VERDICT_PUBLISH_ON_RUNNER_FAILURE=1`: an unusable model answer gives a degraded result, not a failure. */
  publishOnRunnerFailure: boolean;
  /** `VERDICT_REVIEW_CONCURRENCY` (default 4): parts of one review sent to the model at once. */
  concurrency: number;
  /** `VERDICT_MODEL_CONTEXT_TOKENS`: the model's context window, over the built-in table (null: the table). */
  contextTokens: number | null;
  /**
   * The environment the model providers are selected from (`VERDICT_RUNNER_PROVIDER`, keys, base URLs,
   * prices): `selectProviders` in `src/review/providers` reads it when the review engine is built.
   */
  providerEnv: Readonly<Env>;
};

export function reviewConfigFromEnv(env: Env): ReviewConfig {
  const v = (name: string, fallback: number, min: number, max: number) =>
    int(prefixedName(env, name), prefixed(env, name), fallback, min, max);
  const timeoutMs = v('RUNNER_TIMEOUT_MS', DEFAULT_MODEL_TIMEOUT_MS, 1000, 86_400_000);
  const chunkTokens = v('REVIEW_CHUNK_TOKENS', 60_000, 1000, 2_000_000);
  return {
    timeoutMs,
    shadowTimeoutMs: v('RUNNER_SHADOW_TIMEOUT_MS', Math.min(timeoutMs, 120_000), 1000, 86_400_000),
    chunkTokens,
    fileTokens: Math.min(v('REVIEW_FILE_TOKENS', 12_000, 100, 2_000_000), chunkTokens),
    maxChunks: v('REVIEW_MAX_CHUNKS', 12, 1, 1000),
    publishOnRunnerFailure: flag(env, 'PUBLISH_ON_RUNNER_FAILURE', false),
    concurrency: v('REVIEW_CONCURRENCY', 4, 1, 64),
    contextTokens: blankToUndefined(prefixed(env, 'MODEL_CONTEXT_TOKENS'))
      ? v('MODEL_CONTEXT_TOKENS', 0, 1000, 10_000_000)
      : null,
    providerEnv: Object.freeze({ ...env }),
  };
}

export const DEFAULT_PORT = 8787;
export const DEFAULT_DB_PATH = './data/verdict.sqlite';
export const GITHUB_MAX_PAYLOAD_BYTES = 25 * 1024 * 1024;

export function readPrivateKey(env: Env, readFile: (path: string) => string): string | null {
  const inline = blankToUndefined(env.PRIVATE_KEY);
  if (inline) {
    // Probot accepts escaped newlines and base64; handle escaped newlines, which .env files produce.
    return inline.includes('\\n') ? inline.replace(/\\n/g, '\n') : inline;
  }
  const path = blankToUndefined(env.PRIVATE_KEY_PATH);
  if (!path) return null;
  try {
    return readFile(path);
  } catch (error) {
    throw new ConfigError('PRIVATE_KEY_PATH', `cannot be read (${(error as Error).message})`);
  }
}

export function storeConfigFromEnv(env: Env): StoreConfig {
  const url = blankToUndefined(env.DATABASE_URL);
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new ConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
    }
    return {
      client: 'pg',
      connectionString: url,
      poolMax: int(prefixedName(env, 'PG_POOL_MAX'), prefixed(env, 'PG_POOL_MAX'), 10, 1, 1000),
      schema: blankToUndefined(prefixed(env, 'PG_SCHEMA')),
    };
  }
  return { client: 'sqlite', filename: blankToUndefined(prefixed(env, 'DB_PATH')) ?? DEFAULT_DB_PATH };
}

export const DEFAULT_MODEL_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_VALIDATION_TIMEOUT_MS = 45 * 60_000;
/** Lease the queue server gives a claim that names none (review-engine 8: server default 300 s). */
export const SERVER_DEFAULT_LEASE_MS = 300_000;

export function queueSelectionFromEnv(env: Env, store: StoreConfig): QueueSelection {
  const url = blankToUndefined(prefixed(env, 'QUEUE_URL'));
  const token = blankToUndefined(prefixed(env, 'QUEUE_TOKEN'));
  if (url !== undefined || token !== undefined) {
    if (url === undefined)
      throw new ConfigError(prefixedName(env, 'QUEUE_URL'), 'must be set with VERDICT_QUEUE_TOKEN');
    if (token === undefined)
      throw new ConfigError(prefixedName(env, 'QUEUE_TOKEN'), 'must be set with VERDICT_QUEUE_URL');
    if (!/^https?:\/\//.test(url) || !URL.canParse(url)) {
      throw new ConfigError(prefixedName(env, 'QUEUE_URL'), 'must be an http:// or https:// URL');
    }
    return { kind: 'http', url: url.replace(/\/+$/, ''), token };
  }
  if (store.client === 'pg') return { kind: 'store' };
  const queueDb = blankToUndefined(prefixed(env, 'QUEUE_DB_PATH'));
  if (queueDb !== undefined && queueDb !== store.filename) {
    return queueDb === ':memory:' ? { kind: 'memory' } : { kind: 'sqlite', filename: queueDb };
  }
  return store.filename === ':memory:' ? { kind: 'memory' } : { kind: 'store' };
}

export function workerConfigFromEnv(env: Env): WorkerConfig {
  const maxJobs = int(prefixedName(env, 'WORKER_MAX_JOBS'), prefixed(env, 'WORKER_MAX_JOBS'), 1, 1, 1000);
  const concurrency = int(
    prefixedName(env, 'WORKER_CONCURRENCY'),
    prefixed(env, 'WORKER_CONCURRENCY'),
    1,
    1,
    1000,
  );
  const leaseSeconds = blankToUndefined(prefixed(env, 'QUEUE_LEASE_SECONDS'));
  let leaseMs: number;
  if (leaseSeconds !== undefined) {
    leaseMs = int(prefixedName(env, 'QUEUE_LEASE_SECONDS'), leaseSeconds, 0, 1, 7 * 86400) * 1000;
  } else {
    const model = int(
      prefixedName(env, 'RUNNER_TIMEOUT_MS'),
      prefixed(env, 'RUNNER_TIMEOUT_MS'),
      DEFAULT_MODEL_TIMEOUT_MS,
      1000,
      86_400_000,
    );
    const validation = int(
      prefixedName(env, 'VALIDATION_TIMEOUT_MS'),
      prefixed(env, 'VALIDATION_TIMEOUT_MS'),
      DEFAULT_VALIDATION_TIMEOUT_MS,
      0,
      86_400_000,
    );
    leaseMs = model + validation + 5 * 60_000;
  }
  return {
    id: blankToUndefined(prefixed(env, 'WORKER_ID')) ?? hostname(),
    maxJobs,
    concurrency: Math.min(concurrency, maxJobs),
    leaseMs,
  };
}

export function publicUrlFromEnv(env: Env): string | null {
  const url = blankToUndefined(prefixed(env, 'PUBLIC_URL'));
  if (url === undefined) return null;
  if (!/^https?:\/\//.test(url) || !URL.canParse(url)) {
    throw new ConfigError(prefixedName(env, 'PUBLIC_URL'), 'must be an http:// or https:// URL');
  }
  return url.replace(/\/+$/, '');
}

export function tokensFromEnv(env: Env): ServiceTokens {
  const tokens: ServiceTokens = {};
  for (const [cls, name] of Object.entries(TOKEN_VARIABLES) as Array<[TokenClass, string]>) {
    // Nullish fallback: an empty VERDICT_ value closes the class instead of falling through.
    const value = prefixed(env, name);
    tokens[cls] = value === undefined || value.trim() === '' ? null : value.trim();
  }
  return tokens;
}

export function githubConfigFromEnv(env: Env, readFile: (path: string) => string): GithubConfig {
  const appId = blankToUndefined(env.APP_ID) ?? null;
  if (appId !== null && !/^\d+$/.test(appId.trim())) throw new ConfigError('APP_ID', 'must be a number');
  const privateKey = readPrivateKey(env, readFile);
  const gheHost = blankToUndefined(env.GHE_HOST);
  const protocol = blankToUndefined(env.GHE_PROTOCOL) ?? 'https';
  if (protocol !== 'http' && protocol !== 'https') {
    throw new ConfigError('GHE_PROTOCOL', `must be http or https (got "${protocol}")`);
  }
  const proxy = blankToUndefined(env.WEBHOOK_PROXY_URL) ?? null;
  if (proxy !== null && !URL.canParse(proxy)) throw new ConfigError('WEBHOOK_PROXY_URL', 'must be a URL');
  return {
    appId: appId?.trim() ?? null,
    privateKey,
    hasCredentials: appId !== null && privateKey !== null,
    // NAMES.md: GITHUB_WEBHOOK_SECRET, else Probot's WEBHOOK_SECRET.
    webhookSecret:
      blankToUndefined(env.GITHUB_WEBHOOK_SECRET) ?? blankToUndefined(env.WEBHOOK_SECRET) ?? null,
    webhookProxyUrl: proxy,
    baseUrl: gheHost ? `${protocol}://${gheHost}/api/v3` : 'https://api.github.com',
    webUrl: gheHost ? `${protocol}://${gheHost}` : 'https://github.com',
    requestRetries: int(prefixedName(env, 'GITHUB_RETRIES'), prefixed(env, 'GITHUB_RETRIES'), 3, 0, 10),
  };
}

export function loadConfig(
  env: Env = process.env,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): Config {
  const logLevel = logLevelSchema.safeParse(blankToUndefined(env.LOG_LEVEL) ?? 'info');
  if (!logLevel.success) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${logLevelSchema.options.join(', ')}`);
  }
  const productName = blankToUndefined(prefixed(env, 'PRODUCT_NAME')) ?? 'Verdict';
  const handles = list(prefixed(env, 'BOT_HANDLES'))
    .map((h) => h.replace(/^@/, '').toLowerCase())
    .filter((h) => h.length > 0);
  for (const handle of handles) {
    if (!/^[a-z0-9][a-z0-9-]*(\[bot\])?$/.test(handle)) {
      throw new ConfigError(prefixedName(env, 'BOT_HANDLES'), `has an invalid handle "${handle}"`);
    }
  }
  const store = storeConfigFromEnv(env);
  const worker = workerConfigFromEnv(env);
  const github = githubConfigFromEnv(env, readFile);
  const publishModeValue = blankToUndefined(prefixed(env, 'PUBLISH_MODE'));
  if (publishModeValue !== undefined && !['live', 'shadow'].includes(publishModeValue)) {
    throw new ConfigError(prefixedName(env, 'PUBLISH_MODE'), 'must be live or shadow');
  }
  return {
    port: int('PORT', env.PORT, DEFAULT_PORT, 0, 65535),
    host: blankToUndefined(env.HOST) ?? '0.0.0.0',
    logLevel: logLevel.data,
    productName,
    checkName: `${productName} / review`,
    store,
    github,
    publishMode: github.hasCredentials && publishModeValue !== 'shadow' ? 'live' : 'shadow',
    dedupeTtlSeconds: int('DEDUPE_TTL_SECONDS', env.DEDUPE_TTL_SECONDS, 604800, 1, 10 * 365 * 86400),
    botHandles: handles.length > 0 ? handles : ['verdict', 'reviewbot'],
    competitorLogins: list(prefixed(env, 'COMPETITOR_LOGINS')).map((l) => l.toLowerCase()),
    competitorTriggersReview: flag(env, 'COMPETITOR_TRIGGERS_REVIEW', false),
    workerInline: flag(env, 'WORKER_INLINE', true),
    workerId: worker.id,
    worker,
    queue: queueSelectionFromEnv(env, store),
    tokens: tokensFromEnv(env),
    publicUrl: publicUrlFromEnv(env),
    maxWebhookBytes: GITHUB_MAX_PAYLOAD_BYTES,
    webhookInflightBytes: int(
      prefixedName(env, 'WEBHOOK_INFLIGHT_BYTES'),
      prefixed(env, 'WEBHOOK_INFLIGHT_BYTES'),
      100 * 1024 * 1024,
      1024,
      16 * 1024 * 1024 * 1024,
    ),
    requestTimeoutMs: int(
      prefixedName(env, 'REQUEST_TIMEOUT_MS'),
      prefixed(env, 'REQUEST_TIMEOUT_MS'),
      10_000,
      100,
      300_000,
    ),
    operatorCacheMs: int(
      prefixedName(env, 'OPERATOR_CACHE_MS'),
      prefixed(env, 'OPERATOR_CACHE_MS'),
      1000,
      0,
      15_000,
    ),
    review: reviewConfigFromEnv(env),
    scheduler: schedulerConfigFromEnv(env),
  };
}

export function schedulerConfigFromEnv(env: Env): SchedulerConfig {
  const authority = blankToUndefined(prefixed(env, 'CRON_AUTHORITY')) ?? 'live';
  if (authority !== 'live' && authority !== 'shadow') {
    throw new ConfigError(prefixedName(env, 'CRON_AUTHORITY'), 'must be live or shadow');
  }
  const alertUrl = blankToUndefined(prefixed(env, 'WATCHDOG_ALERT_URL')) ?? null;
  if (alertUrl !== null && (!/^https?:\/\//.test(alertUrl) || !URL.canParse(alertUrl))) {
    throw new ConfigError(prefixedName(env, 'WATCHDOG_ALERT_URL'), 'must be an http:// or https:// URL');
  }
  return {
    enabled: flag(env, 'SCHEDULER', true),
    authority,
    deliveryRetentionDays: int(
      prefixedName(env, 'DELIVERY_RETENTION_DAYS'),
      prefixed(env, 'DELIVERY_RETENTION_DAYS'),
      30,
      0,
      3650,
    ),
    alertUrl,
  };
}

/** For process entry points: the config, or one line on stderr naming the bad variable and exit 1. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

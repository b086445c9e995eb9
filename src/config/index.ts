import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { ServiceTokens, TokenClass } from '../http/auth.js';
import type { PriceTable, ProviderName } from '../review/providers/types.js';
import { validationConfig, type ValidationConfig } from './validation.js';
export type { ValidationConfig, ValidationSwitch } from './validation.js';
import { ConfigError, lookup, parseEnv, type ProcessEnv, type Settings, type VariableName } from './env.js';

/**
 * Environment → typed config: `loadConfig(env = process.env)` parses the catalogue of env.ts (the only
 * place that knows variable names and the `VERDICT_` / `REVIEWBOT_` prefix rule; each variable is
 * documented there) and shapes the values into `Config`. Rules that join several variables (queue
 * selection, the lease formula, live or shadow publication, API key aliases) live here.
 */
export { ConfigError, lookup, type ProcessEnv } from './env.js';

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
  /** The lease owner is `<id>:<pid>`. */
  id: string;
  maxJobs: number;
  /** Capped by maxJobs. */
  concurrency: number;
  /** `VERDICT_QUEUE_LEASE_SECONDS`, else model timeout + validation timeout + 5 minutes. */
  leaseMs: number;
};

export type Config = {
  port: number;
  host: string;
  logLevel: Settings['LOG_LEVEL'];
  /** `auto`: human-readable on a terminal, JSON otherwise (src/logger.ts). */
  logFormat: Settings['LOG_FORMAT'];
  productName: string;
  checkName: string;
  store: StoreConfig;
  github: GithubConfig;
  dedupeTtlSeconds: number;
  botHandles: string[];
  competitorLogins: string[];
  competitorTriggersReview: boolean;
  /**
   * `live` publishes to GitHub; `shadow` records what would have been published. Shadow without App
   * credentials, or with `VERDICT_PUBLISH_MODE=shadow`.
   */
  publishMode: 'live' | 'shadow';
  workerInline: boolean;
  /** `VERDICT_WORKER_THREAD`: the inline worker in a worker thread (when the process's environment is given). */
  workerThread: boolean;
  /** `VERDICT_INTAKE_THREAD`: deliveries recorded by a thread of their own (a SQLite file, when the process's environment is given). */
  intakeThread: boolean;
  worker: WorkerConfig;
  queue: QueueSelection;
  /** Static service tokens (operator-api 5.1); a missing class accepts nothing. */
  tokens: ServiceTokens;
  publicUrl: string | null;
  /** Largest webhook body accepted (GitHub caps payloads at 25 MB). */
  maxWebhookBytes: number;
  webhookInflightBytes: number;
  requestTimeoutMs: number;
  operatorCacheMs: number;
  review: ReviewConfig;
  scheduler: SchedulerConfig;
  dashboard: DashboardConfig;
  setup: SetupConfig;
  validation: ValidationConfig;
  evidence: EvidenceConfig;
};

/** Where evidence artifacts are stored (docs/evidence.md); `none`: nowhere (`no_artifact_storage`). */
export type EvidenceStoreConfig =
  | { kind: 'none' }
  | { kind: 'local'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      /** An S3-compatible store's endpoint (null: AWS S3). */
      endpoint: string | null;
      /** Key prefix without surrounding slashes ('' for none). */
      prefix: string;
      forcePathStyle: boolean;
    };

/** Evidence artifacts of findings (review-engine 2.6; docs/evidence.md). */
export type EvidenceConfig = {
  /** `VERDICT_EVIDENCE_ARTIFACTS=1`: command outputs are stored and attached to execution claims. */
  enabled: boolean;
  /** `VERDICT_EVIDENCE_REQUIRE_ARTIFACTS=1`: claims left without one are `unverified` (only when enabled). */
  requireArtifacts: boolean;
  store: EvidenceStoreConfig;
  /** `VERDICT_EVIDENCE_PUBLIC_BASE_URL` without its trailing slash (null: none). */
  publicBaseUrl: string | null;
};

/** The operator dashboard (issue 25; docs/dashboard.md). */
export type DashboardConfig = {
  /** `VERDICT_OPERATOR_UI_ENABLED=1`: its paths are routed; otherwise they are unknown paths (404). */
  enabled: boolean;
  /** `VERDICT_OPERATOR_UI_TOKEN` (null: no token opens the dashboard). */
  token: string | null;
  /** The App's OAuth client (both set, or GitHub sign-in is off). */
  oauth: { clientId: string; clientSecret: string } | null;
  /** Lower-case logins and organisations allowed to sign in with GitHub (both empty: nobody). */
  allowedLogins: string[];
  allowedOrgs: string[];
  sessionTtlMs: number;
  /** `VERDICT_UI_BACKEND_URL` (null: this server on its bound port). */
  backendUrl: string | null;
};

/** The first-run App registration (docs/setup.md), served only while the App has no credentials. */
export type SetupConfig = {
  /** `GH_ORG`: register the App on this organisation (null: on the user's account). */
  org: string | null;
  /** `VERDICT_SETUP_ALLOW_REMOTE`: also answer clients that are not on this machine. */
  allowRemote: boolean;
};

/** Scheduled jobs (review-engine 6.4) and the command bridge they run. */
export type SchedulerConfig = {
  enabled: boolean;
  authority: 'live' | 'shadow';
  deliveryRetentionDays: number;
  alertUrl: string | null;
  /** Telegram delivery of alerts (`alerts.telegram` repositories): the bot token, or null. */
  telegramBotToken: string | null;
  telegramApiUrl: string;
};

/** How a review runs (review-engine 8; the context budget of the review issue). */
export type ReviewConfig = {
  timeoutMs: number;
  /** One shadow model call: `VERDICT_RUNNER_SHADOW_TIMEOUT_MS`, else the smaller of timeoutMs and 120000. */
  shadowTimeoutMs: number;
  chunkTokens: number;
  /** One file's diff before it is clipped (at most chunkTokens). */
  fileTokens: number;
  maxChunks: number;
  publishOnRunnerFailure: boolean;
  concurrency: number;
  /** The model's context window, over the built-in table (null: the table). */
  contextTokens: number | null;
  /** The model providers `selectProviders` (src/review/providers) builds when the review engine is built. */
  providers: ProviderConfig;
  /**
   * Verification of the findings (NAMES.md): `enabled` is `VERDICT_VERIFICATION` (null when unset: on for
   * the HTTP providers, off for codex), `threshold` the score a finding needs (`.github/verdict.yml` wins).
   */
  verification: { enabled: boolean | null; threshold: number };
};

/** A provider and model; `modelVariable` names the variable a missing or refused model is blamed on. */
export type ModelChoice = { provider: ProviderName; model: string | null; modelVariable: string };

/** An HTTP provider's key (null when unset: calls fail with code `config`) and base URL (no trailing slash). */
export type HttpProviderConfig = { apiKey: string | null; apiKeyVariable: string; baseUrl: string };

/**
 * Provider and model selection (review-engine 8): the primary from `VERDICT_RUNNER_PROVIDER` /
 * `VERDICT_RUNNER_MODEL`; a shadow only with `VERDICT_RUNNER_SHADOW_MODEL` (its provider
 * `VERDICT_RUNNER_SHADOW_PROVIDER`, else the primary's). A missing API key does not stop start-up.
 */
export type ProviderConfig = {
  primary: ModelChoice;
  shadow: ModelChoice | null;
  /** `VERDICT_VERIFIER_MODEL`: the verification calls' model, of the primary's provider (null: the primary). */
  verifier: ModelChoice | null;
  /** `VERDICT_OPENROUTER_MAX_TOKENS`: `max_tokens` of every HTTP provider when set. */
  maxTokens: number | null;
  openrouter: HttpProviderConfig & {
    /** The free-only guard (fails closed: only `VERDICT_OPENROUTER_REQUIRE_FREE=0` turns it off). */
    requireFree: boolean;
    /** App attribution headers: `HTTP-Referer` (the public URL, when set) and `X-Title`. */
    appUrl: string | null;
    appName: string;
  };
  /** `keyRequired`: false for a base URL other than api.openai.com (a local server needs no key). */
  openai: HttpProviderConfig & { keyRequired: boolean };
  anthropic: HttpProviderConfig & { version: string; maxTokens: number };
  codex: { bin: string; home: string | null };
  /** `VERDICT_MODEL_PRICES`: rates over the built-in ones. */
  priceOverrides: PriceTable;
};

/** Lease the queue server gives a claim that names none (review-engine 8: server default 300 s). */
export const SERVER_DEFAULT_LEASE_MS = 300_000;

const TOKEN_VARIABLES: Record<TokenClass, VariableName> = {
  operatorRead: 'VERDICT_OPERATOR_READ_TOKEN',
  operatorAdmin: 'VERDICT_OPERATOR_ADMIN_TOKEN',
  operatorCommand: 'VERDICT_OPERATOR_COMMAND_TOKEN',
  operatorBridge: 'VERDICT_OPERATOR_BRIDGE_TOKEN',
  queueAdmin: 'VERDICT_QUEUE_ADMIN_TOKEN',
  queueEnqueue: 'VERDICT_QUEUE_ENQUEUE_TOKEN',
  queueWorker: 'VERDICT_QUEUE_WORKER_TOKEN',
};

export function loadConfig(
  env: ProcessEnv = process.env,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): Config {
  const s = parseEnv(env);
  const store = storeConfig(s);
  const github = githubConfig(s, readFile);
  return {
    port: s.PORT,
    host: s.HOST,
    logLevel: s.LOG_LEVEL,
    logFormat: s.LOG_FORMAT,
    productName: s.VERDICT_PRODUCT_NAME,
    checkName: `${s.VERDICT_PRODUCT_NAME} / review`,
    store,
    github,
    publishMode: github.hasCredentials && s.VERDICT_PUBLISH_MODE !== 'shadow' ? 'live' : 'shadow',
    dedupeTtlSeconds: s.DEDUPE_TTL_SECONDS,
    botHandles: s.VERDICT_BOT_HANDLES,
    competitorLogins: s.VERDICT_COMPETITOR_LOGINS ?? [],
    competitorTriggersReview: s.VERDICT_COMPETITOR_TRIGGERS_REVIEW,
    workerInline: s.VERDICT_WORKER_INLINE,
    workerThread: s.VERDICT_WORKER_THREAD,
    intakeThread: s.VERDICT_INTAKE_THREAD,
    worker: workerConfig(s),
    queue: queueSelection(s, env, store),
    // A blank token is unset: the class is closed (an empty VERDICT_ value does not fall through).
    tokens: Object.fromEntries(
      Object.entries(TOKEN_VARIABLES).map(([cls, name]) => [cls, s[name] ?? null]),
    ) as ServiceTokens,
    publicUrl: s.VERDICT_PUBLIC_URL ?? null,
    maxWebhookBytes: 25 * 1024 * 1024,
    webhookInflightBytes: s.VERDICT_WEBHOOK_INFLIGHT_BYTES,
    requestTimeoutMs: s.VERDICT_REQUEST_TIMEOUT_MS,
    operatorCacheMs: s.VERDICT_OPERATOR_CACHE_MS,
    review: {
      timeoutMs: s.VERDICT_RUNNER_TIMEOUT_MS,
      shadowTimeoutMs: s.VERDICT_RUNNER_SHADOW_TIMEOUT_MS ?? Math.min(s.VERDICT_RUNNER_TIMEOUT_MS, 120_000),
      chunkTokens: s.VERDICT_REVIEW_CHUNK_TOKENS,
      fileTokens: Math.min(s.VERDICT_REVIEW_FILE_TOKENS, s.VERDICT_REVIEW_CHUNK_TOKENS),
      maxChunks: s.VERDICT_REVIEW_MAX_CHUNKS,
      publishOnRunnerFailure: s.VERDICT_PUBLISH_ON_RUNNER_FAILURE,
      concurrency: s.VERDICT_REVIEW_CONCURRENCY,
      contextTokens: s.VERDICT_MODEL_CONTEXT_TOKENS ?? null,
      providers: providerConfig(s, env),
      verification: {
        enabled: s.VERDICT_VERIFICATION ?? null,
        threshold: s.VERDICT_VERIFICATION_THRESHOLD,
      },
    },
    scheduler: {
      enabled: s.VERDICT_SCHEDULER,
      authority: s.VERDICT_CRON_AUTHORITY,
      deliveryRetentionDays: s.VERDICT_DELIVERY_RETENTION_DAYS,
      alertUrl: s.VERDICT_WATCHDOG_ALERT_URL ?? null,
      telegramBotToken: s.VERDICT_TELEGRAM_BOT_TOKEN ?? null,
      telegramApiUrl: s.VERDICT_TELEGRAM_API_URL,
    },
    validation: validationConfig(s, env),
    evidence: evidenceConfig(s, env),
    dashboard: {
      enabled: s.VERDICT_OPERATOR_UI_ENABLED,
      token: s.VERDICT_OPERATOR_UI_TOKEN ?? null,
      oauth:
        s.GITHUB_CLIENT_ID !== undefined && s.GITHUB_CLIENT_SECRET !== undefined
          ? { clientId: s.GITHUB_CLIENT_ID, clientSecret: s.GITHUB_CLIENT_SECRET }
          : null,
      allowedLogins: s.VERDICT_UI_ALLOWED_LOGINS ?? [],
      allowedOrgs: s.VERDICT_UI_ALLOWED_ORGS ?? [],
      sessionTtlMs: s.VERDICT_UI_SESSION_TTL_HOURS * 3_600_000,
      backendUrl: s.VERDICT_UI_BACKEND_URL ?? null,
    },
    setup: { org: s.GH_ORG ?? null, allowRemote: s.VERDICT_SETUP_ALLOW_REMOTE },
  };
}

function storeConfig(s: Settings): StoreConfig {
  if (s.DATABASE_URL !== undefined) {
    return {
      client: 'pg',
      connectionString: s.DATABASE_URL,
      poolMax: s.VERDICT_PG_POOL_MAX,
      schema: s.VERDICT_PG_SCHEMA,
    };
  }
  return { client: 'sqlite', filename: s.VERDICT_DB_PATH };
}

function githubConfig(s: Settings, readFile: (path: string) => string): GithubConfig {
  let privateKey = s.PRIVATE_KEY ?? null;
  if (privateKey === null && s.PRIVATE_KEY_PATH !== undefined) {
    try {
      privateKey = readFile(s.PRIVATE_KEY_PATH);
    } catch (error) {
      throw new ConfigError('PRIVATE_KEY_PATH', `cannot be read (${(error as Error).message})`);
    }
  }
  const protocol = s.GHE_PROTOCOL;
  return {
    appId: s.APP_ID ?? null,
    privateKey,
    hasCredentials: s.APP_ID !== undefined && privateKey !== null,
    // NAMES.md: GITHUB_WEBHOOK_SECRET, else Probot's WEBHOOK_SECRET.
    webhookSecret: s.GITHUB_WEBHOOK_SECRET ?? s.WEBHOOK_SECRET ?? null,
    webhookProxyUrl: s.WEBHOOK_PROXY_URL ?? null,
    baseUrl: s.GHE_HOST ? `${protocol}://${s.GHE_HOST}/api/v3` : 'https://api.github.com',
    webUrl: s.GHE_HOST ? `${protocol}://${s.GHE_HOST}` : 'https://github.com',
    requestRetries: s.VERDICT_GITHUB_RETRIES,
  };
}

function workerConfig(s: Settings): WorkerConfig {
  return {
    id: s.VERDICT_WORKER_ID ?? hostname(),
    maxJobs: s.VERDICT_WORKER_MAX_JOBS,
    concurrency: Math.min(s.VERDICT_WORKER_CONCURRENCY, s.VERDICT_WORKER_MAX_JOBS),
    leaseMs:
      s.VERDICT_QUEUE_LEASE_SECONDS !== undefined
        ? s.VERDICT_QUEUE_LEASE_SECONDS * 1000
        : s.VERDICT_RUNNER_TIMEOUT_MS + s.VERDICT_VALIDATION_TIMEOUT_MS + 5 * 60_000,
  };
}

function queueSelection(s: Settings, env: ProcessEnv, store: StoreConfig): QueueSelection {
  const url = s.VERDICT_QUEUE_URL;
  const token = s.VERDICT_QUEUE_TOKEN;
  if (url === undefined && token !== undefined) {
    throw new ConfigError(lookup(env, 'VERDICT_QUEUE_URL').variable, 'must be set with VERDICT_QUEUE_TOKEN');
  }
  if (url !== undefined && token === undefined) {
    throw new ConfigError(lookup(env, 'VERDICT_QUEUE_TOKEN').variable, 'must be set with VERDICT_QUEUE_URL');
  }
  if (url !== undefined && token !== undefined) return { kind: 'http', url, token };
  if (store.client === 'pg') return { kind: 'store' };
  const queueDb = s.VERDICT_QUEUE_DB_PATH;
  if (queueDb !== undefined && queueDb !== store.filename) {
    return queueDb === ':memory:' ? { kind: 'memory' } : { kind: 'sqlite', filename: queueDb };
  }
  return store.filename === ':memory:' ? { kind: 'memory' } : { kind: 'store' };
}

/**
 * Whether the `openai` provider needs an API key at this base URL: only at OpenAI's own API. Another
 * OpenAI-compatible server (Ollama, vLLM, LM Studio on localhost) often runs without one; a key that is
 * set is still sent to it.
 */
export function openAiKeyRequired(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === 'api.openai.com';
  } catch {
    return true;
  }
}

function providerConfig(s: Settings, env: ProcessEnv): ProviderConfig {
  // The bare key first, then the prefixed alias (a blank one counts as unset).
  const http = (name: 'OPENROUTER' | 'OPENAI' | 'ANTHROPIC'): HttpProviderConfig => ({
    apiKey: s[`${name}_API_KEY`] ?? s[`VERDICT_${name}_API_KEY`] ?? null,
    apiKeyVariable: `${name}_API_KEY (or VERDICT_${name}_API_KEY)`,
    baseUrl: s[`VERDICT_${name}_BASE_URL`],
  });
  const provider = s.VERDICT_RUNNER_PROVIDER;
  const shadowModel = s.VERDICT_RUNNER_SHADOW_MODEL;
  const verifierModel = s.VERDICT_VERIFIER_MODEL;
  return {
    primary: {
      provider,
      model: s.VERDICT_RUNNER_MODEL ?? null,
      modelVariable: lookup(env, 'VERDICT_RUNNER_MODEL').variable,
    },
    shadow:
      shadowModel === undefined
        ? null
        : {
            provider: s.VERDICT_RUNNER_SHADOW_PROVIDER ?? provider,
            model: shadowModel,
            modelVariable: lookup(env, 'VERDICT_RUNNER_SHADOW_MODEL').variable,
          },
    verifier:
      verifierModel === undefined
        ? null
        : { provider, model: verifierModel, modelVariable: lookup(env, 'VERDICT_VERIFIER_MODEL').variable },
    maxTokens: s.VERDICT_OPENROUTER_MAX_TOKENS ?? null,
    openrouter: {
      ...http('OPENROUTER'),
      requireFree: s.VERDICT_OPENROUTER_REQUIRE_FREE,
      appUrl: s.VERDICT_PUBLIC_URL ?? null,
      appName: s.VERDICT_PRODUCT_NAME,
    },
    openai: { ...http('OPENAI'), keyRequired: openAiKeyRequired(s.VERDICT_OPENAI_BASE_URL) },
    anthropic: {
      ...http('ANTHROPIC'),
      version: s.VERDICT_ANTHROPIC_VERSION,
      maxTokens: s.VERDICT_OPENROUTER_MAX_TOKENS ?? s.VERDICT_ANTHROPIC_MAX_TOKENS,
    },
    codex: { bin: s.VERDICT_RUNNER_BIN, home: s.VERDICT_RUNNER_HOME ?? null },
    priceOverrides: s.VERDICT_MODEL_PRICES ?? {},
  };
}

function evidenceConfig(s: Settings, env: ProcessEnv): EvidenceConfig {
  const kind = s.VERDICT_EVIDENCE_STORE;
  let store: EvidenceStoreConfig;
  if (kind === 's3') {
    const bucket = s.VERDICT_EVIDENCE_S3_BUCKET;
    if (bucket === undefined) {
      throw new ConfigError(
        lookup(env, 'VERDICT_EVIDENCE_S3_BUCKET').variable,
        'must be set with VERDICT_EVIDENCE_STORE=s3',
      );
    }
    store = {
      kind,
      bucket,
      region: s.VERDICT_EVIDENCE_S3_REGION,
      endpoint: s.VERDICT_EVIDENCE_S3_ENDPOINT ?? null,
      prefix: s.VERDICT_EVIDENCE_S3_PREFIX ?? '',
      forcePathStyle: s.VERDICT_EVIDENCE_S3_FORCE_PATH_STYLE,
    };
  } else if (kind === 'local') {
    // Beside the SQLite store file: `evidence/` in VERDICT_DB_PATH's directory (an in-memory store has
    // none, so the default store's directory, ./data).
    const dataDir = s.VERDICT_DB_PATH === ':memory:' ? './data' : dirname(s.VERDICT_DB_PATH);
    store = { kind, dir: s.VERDICT_EVIDENCE_DIR ?? join(dataDir, 'evidence') };
  } else {
    store = { kind };
  }
  return {
    enabled: s.VERDICT_EVIDENCE_ARTIFACTS,
    requireArtifacts: s.VERDICT_EVIDENCE_REQUIRE_ARTIFACTS,
    store,
    publicBaseUrl: s.VERDICT_EVIDENCE_PUBLIC_BASE_URL ?? null,
  };
}

/** For process entry points: the config, or one line on stderr naming the bad variable and exit 1. */
export function loadConfigOrExit(env: ProcessEnv = process.env): Config {
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

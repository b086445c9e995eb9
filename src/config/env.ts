import { z } from 'zod';
import { PROVIDER_NAMES, type PriceTable } from '../review/providers/types.js';

/**
 * The environment Verdict reads, as data: one entry per variable with its one-line documentation, its zod
 * schema and its default. `loadConfig` (index.ts) builds the typed config from the parsed values;
 * `.env.example` and the table of docs/configuration.md are generated from this catalogue (docs.ts).
 *
 * Prefix rule: a variable named `VERDICT_<name>` also answers to the legacy `REVIEWBOT_<name>`, with a
 * nullish fallback (`VERDICT_<name>` when it is set at all, even empty, else `REVIEWBOT_<name>`). Every
 * other variable is read under its own name only. An unset or blank value means the default.
 */

export const CANONICAL_PREFIX = 'VERDICT_';
export const LEGACY_PREFIX = 'REVIEWBOT_';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

// --- Schemas of the values: each reads a non-blank string; `describe` names the accepted values. -------

/** A value as written. */
const text = z.string();
/** A value without surrounding whitespace. */
const trimmed = z.string().trim();

function integer(min: number, max: number) {
  const range = (iss: { input?: unknown }) =>
    `must be an integer from ${min} to ${max} (got "${String(iss.input)}")`;
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, { error: (iss) => `must be an integer (got "${String(iss.input)}")` })
    .transform(Number)
    .pipe(z.int({ error: range }).min(min, { error: range }).max(max, { error: range }))
    .describe(`integer from ${min} to ${max}`);
}

/**
 * The one boolean rule of the configuration: `1` or `true` is on, `0` or `false` is off (any case); unset
 * or blank is the variable's default; anything else stops start-up naming the variable.
 */
export const flag = z
  .string()
  .trim()
  .pipe(z.stringbool({ truthy: ['1', 'true'], falsy: ['0', 'false'], error: 'must be 0, 1, true or false' }))
  .describe('flag: 1 or true, 0 or false');

/** `VERDICT_OPENROUTER_REQUIRE_FREE`'s own rule: it fails closed, only exactly `0` turns it off. */
const onUnlessZero = z
  .string()
  .transform((value) => value !== '0')
  .describe('0 turns it off, any other value keeps it on');

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .string()
    .trim()
    .pipe(
      z.enum(values, { error: (iss) => `must be one of ${values.join(', ')} (got "${String(iss.input)}")` }),
    )
    .describe(`one of ${values.join(', ')}`);
}

/** The spec's neutral provider words, named in the error to point at the real value. */
export const SPEC_PROVIDER_WORDS: Record<string, string> = {
  gateway: 'openrouter',
  direct_a: 'openai',
  direct_b: 'anthropic',
  cli: 'codex',
};

/** A model provider (case-insensitive); the spec's neutral word gets a hint at the real value. */
const provider = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(
    z.enum(PROVIDER_NAMES, {
      error: (iss) => {
        const hint = SPEC_PROVIDER_WORDS[String(iss.input)];
        return `must be one of ${PROVIDER_NAMES.join(', ')} (got "${String(iss.input)}"${hint ? `; use "${hint}"` : ''})`;
      },
    }),
  )
  .describe(`one of ${PROVIDER_NAMES.join(', ')}`);

const httpUrl = z
  .string()
  .trim()
  .refine((value) => /^https?:\/\//i.test(value) && URL.canParse(value), 'must be an http:// or https:// URL')
  .describe('http(s) URL');

/** An http(s) URL without its trailing slashes. */
const baseUrl = httpUrl.transform((value) => value.replace(/\/+$/, '')).describe('http(s) URL');

/** An http(s) URL ending in exactly one slash (a registry's prefix: `https://r.example/npm/`). */
const registryUrl = httpUrl.transform((value) => `${value.replace(/\/+$/, '')}/`).describe('http(s) URL');

/** A comma-separated list; blank items are dropped. */
function list<T extends z.ZodType<string, string>>(item: T) {
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
    .pipe(z.array(item))
    .describe('comma-separated list');
}

const DEFAULT_BOT_HANDLES = ['verdict', 'reviewbot'];
/** Comment handles: a leading `@` dropped, lower case; only blank items (`,`) mean the default. */
const handles = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((h) => h.trim().replace(/^@/, '').toLowerCase())
      .filter((h) => h.length > 0),
  )
  .pipe(
    z.array(
      z.string().regex(/^[a-z0-9][a-z0-9-]*(\[bot\])?$/, {
        error: (iss) => `has an invalid handle "${String(iss.input)}"`,
      }),
    ),
  )
  .transform((items) => (items.length > 0 ? items : DEFAULT_BOT_HANDLES))
  .describe('comma-separated list');

/** A price in USD per million tokens; messages name the entry (the first element of the issue's path). */
function usd(field: string) {
  const error = (iss: { input?: unknown; path?: PropertyKey[] }) =>
    field === 'cachedInput'
      ? `entry "${String(iss.path?.[0])}" has "cachedInput" that is not a finite, non-negative number of USD per million tokens`
      : `entry "${String(iss.path?.[0])}" needs "${field}" as a finite, non-negative number of USD per million tokens (got ${JSON.stringify(iss.input) ?? 'nothing'})`;
  return z.number({ error }).min(0, { error });
}

/** `VERDICT_MODEL_PRICES`: `{ "<provider>/<model>" | "<model>": { input, output, cachedInput? } }`. */
const priceOverrides: z.ZodType<PriceTable, string> = z
  .string()
  .transform((raw, ctx) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch (error) {
      ctx.issues.push({
        code: 'custom',
        input: raw,
        message: `must be a JSON object like {"openai/gpt-4o":{"input":2.5,"output":10}} (${(error as Error).message})`,
      });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .record(
        z.string(),
        z.object(
          { input: usd('input'), output: usd('output'), cachedInput: usd('cachedInput').optional() },
          { error: (iss) => `entry "${String(iss.path?.[0])}" must be an object {"input": n, "output": n}` },
        ),
        { error: 'must be a JSON object of {"<provider>/<model>": {"input": n, "output": n}}' },
      )
      .refine((table) => Object.keys(table).every((key) => key.trim() !== ''), 'has an empty model key'),
  )
  .describe('JSON object');

// --- The catalogue ----------------------------------------------------------------------------------------

export type Variable<S extends z.ZodType = z.ZodType, D extends string | undefined = string | undefined> = {
  /** One line of documentation (`.env.example`, docs/configuration.md). */
  readonly doc: string;
  /** Parses the non-blank value (or the default). */
  readonly schema: S;
  /** The value an unset or blank variable takes, parsed like a set one; none when the default is computed. */
  readonly default: D;
};

function v<S extends z.ZodType<unknown, string>, const D extends string | undefined = undefined>(
  doc: string,
  schema: S,
  defaultValue?: D,
): Variable<S, D> {
  return { doc, schema, default: defaultValue as D };
}

const server = {
  PORT: v(
    'Port of the HTTP server (health, webhooks, operator API, queue, tRPC, dashboard).',
    integer(0, 65535),
    '8787',
  ),
  HOST: v('Address to bind.', text, '0.0.0.0'),
  LOG_LEVEL: v(
    'Level of the structured log.',
    oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    'info',
  ),
  LOG_FORMAT: v(
    'How log lines are written: auto is human-readable (pino-pretty) when the output is a terminal and one JSON line per event otherwise.',
    oneOf(['auto', 'json', 'pretty']),
    'auto',
  ),
};

const github = {
  APP_ID: v(
    "App id from the App's settings page; without APP_ID and a private key, publication stays in shadow mode.",
    trimmed.regex(/^\d+$/, 'must be a number').describe('number'),
  ),
  PRIVATE_KEY: v(
    "The App's private key (PEM; escaped \\n allowed, as .env files write it).",
    text.transform((key) => (key.includes('\\n') ? key.replace(/\\n/g, '\n') : key)),
  ),
  PRIVATE_KEY_PATH: v('A .pem file holding the private key, read when PRIVATE_KEY is unset.', text),
  GITHUB_WEBHOOK_SECRET: v(
    'Secret verifying x-hub-signature-256; without it (and WEBHOOK_SECRET) every webhook is refused.',
    text,
  ),
  WEBHOOK_SECRET: v("Probot's name for the webhook secret, used when GITHUB_WEBHOOK_SECRET is unset.", text),
  WEBHOOK_PROXY_URL: v(
    'smee.io channel for local development: webhooks are forwarded to this server.',
    text.refine((url) => URL.canParse(url), 'must be a URL').describe('URL'),
  ),
  GHE_HOST: v(
    'GitHub Enterprise Server host (or a local fake GitHub API in tests); unset: github.com.',
    text,
  ),
  GHE_PROTOCOL: v('Protocol of GHE_HOST.', oneOf(['https', 'http']), 'https'),
};

const store = {
  VERDICT_DB_PATH: v(
    'SQLite store (WAL, synchronous = FULL, busy timeout 5000 ms), created on first start; for one process.',
    text,
    './data/verdict.sqlite',
  ),
  DATABASE_URL: v(
    'postgres://user@host:5432/db selects PostgreSQL instead of SQLite (several servers and workers share it).',
    text
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .describe('postgres:// or postgresql:// URL'),
  ),
  VERDICT_PG_POOL_MAX: v('Connection pool size per process on PostgreSQL.', integer(1, 1000), '10'),
  VERDICT_PG_SCHEMA: v("PostgreSQL schema to use (default: the connection's search_path).", text),
};

const ingress = {
  DEDUPE_TTL_SECONDS: v(
    'How long a delivery id is remembered for dedupe, in seconds (7 days).',
    integer(1, 10 * 365 * 86400),
    '604800',
  ),
  VERDICT_BOT_HANDLES: v(
    'Comment handles that address the bot (@verdict, @reviewbot); a leading @ is dropped.',
    handles,
    DEFAULT_BOT_HANDLES.join(','),
  ),
  VERDICT_COMPETITOR_LOGINS: v(
    'Logins of other review bots, e.g. coderabbitai[bot], whose reviews and PR comments are kept and compared with ours.',
    list(z.string().toLowerCase()),
  ),
  VERDICT_COMPETITOR_TRIGGERS_REVIEW: v(
    '1: a review or PR comment by one of those bots requests a review of the stored head.',
    flag,
    '0',
  ),
};

const publication = {
  VERDICT_PRODUCT_NAME: v(
    'Product name; the check run is named "<name> / review" (and OpenRouter calls carry it as X-Title).',
    text,
    'Verdict',
  ),
  VERDICT_PUBLISH_MODE: v(
    'shadow: record what would be published without calling GitHub (default: live with App credentials, else shadow).',
    oneOf(['live', 'shadow']),
  ),
  VERDICT_GITHUB_RETRIES: v(
    'Retries of a GitHub request after a server error or a (secondary) rate limit, after the wait GitHub asks for.',
    integer(0, 10),
    '3',
  ),
};

const worker = {
  VERDICT_WORKER_INLINE: v(
    '0 turns the in-process review worker off (run `npm run worker` separately).',
    flag,
    '1',
  ),
  VERDICT_WORKER_THREAD: v(
    '1: the in-process worker of `npm start` runs in a worker thread with its own store connection, so reviews and webhook processing never hold up webhook intake; 0: in the server thread.',
    flag,
    '1',
  ),
  VERDICT_WORKER_ID: v(
    'Worker identity for leases (default: the host name); the lease owner is <id>:<pid>.',
    text,
  ),
  VERDICT_WORKER_MAX_JOBS: v('Review jobs one worker process holds at once.', integer(1, 1000), '1'),
  VERDICT_WORKER_CONCURRENCY: v(
    'Review jobs one worker process runs in parallel (capped by VERDICT_WORKER_MAX_JOBS).',
    integer(1, 1000),
    '1',
  ),
  VERDICT_QUEUE_LEASE_SECONDS: v(
    'Job lease in seconds (default: model timeout + validation timeout + 5 minutes = 3600).',
    integer(1, 7 * 86400),
  ),
  VERDICT_RUNNER_TIMEOUT_MS: v(
    'Timeout of one model call in ms, also an input of the lease formula.',
    integer(1000, 86_400_000),
    '600000',
  ),
  VERDICT_VALIDATION_TIMEOUT_MS: v(
    'Longest validation timeout in ms, an input of the lease formula.',
    integer(0, 86_400_000),
    '2700000',
  ),
};

/** A non-negative amount of US dollars, written as digits with an optional fraction (`50`, `12.5`). */
const dollars = z
  .string()
  .trim()
  .regex(/^\d{1,12}(\.\d{1,6})?$/, {
    error: (iss) => `must be a non-negative number of USD like 50 or 12.5 (got "${String(iss.input)}")`,
  })
  .transform(Number)
  .describe('non-negative number of USD');

/** A positive rate in US dollars, with up to 12 fraction digits (`0.00003025`). */
const rateDollars = z
  .string()
  .trim()
  .regex(/^\d{1,6}(\.\d{1,12})?$/, {
    error: (iss) => `must be a non-negative number of USD like 0.00003025 (got "${String(iss.input)}")`,
  })
  .transform(Number)
  .refine((n) => n > 0, { error: 'must be above 0' })
  .describe('positive number of USD');

const validation = {
  VERDICT_VALIDATION_ENABLED: v(
    "The operator's switch for running the repository's own checks (test, typecheck, lint, build) in a sandbox beside each review (docs/validation.md). Unset: on when an executor is available (bwrap on PATH, E2B_API_KEY, or the local executor allowed); 0 turns it off whatever the policy says, 1 turns it on.",
    flag,
  ),
  VERDICT_VALIDATION_EVIDENCE_WAIT_MS: v(
    'How long the model call waits for validation results to use them as evidence; later results still reach the review body.',
    integer(0, 3_600_000),
    '30000',
  ),
  VERDICT_VALIDATION_SHADOW_TIMEOUT_MS: v(
    'Time limit of the shadow executor run beside the primary (its failure is never evidence).',
    integer(1, 86_400_000),
    '600000',
  ),
  VERDICT_VALIDATION_CODE_CHANGES_ONLY: v(
    'Skip validation of docs-only and generated-only changes; only exactly `false` turns the gate off.',
    text,
    'true',
  ),
  VERDICT_VALIDATION_TRUSTED_REPOS: v(
    'Repositories (owner/name) trusted to run commands from their committed `.github/verdict.yml` `validation.commands`.',
    list(z.string().toLowerCase()),
  ),
  VERDICT_VALIDATION_ALLOW_LOCAL: v(
    'Allow the `local` executor (host execution through VERDICT_VALIDATION_ISOLATED_COMMAND).',
    flag,
    'false',
  ),
  VERDICT_SELF_HOST_VALIDATION: v(
    'Exactly `1` enables self-hosted validation with the `local` executor (with an isolated-executor command).',
    text,
  ),
  VERDICT_VALIDATION_ISOLATED_COMMAND: v(
    'The isolated-executor command the `local` executor wraps each check in (space-separated argv).',
    trimmed,
  ),
  E2B_API_KEY: v(
    'e2b API key of the process that runs e2b validation (unset: e2b is skipped, "API key unavailable").',
    trimmed,
  ),
  VERDICT_E2B_BUDGET_USD: v(
    'Cumulative recorded e2b cost in USD at or above which the e2b shadow validation is withheld.',
    dollars,
    '50',
  ),
  VERDICT_VALIDATION_INSTALL: v(
    'Dependency install step of the bubblewrap executor: off (commands run offline) or registry (npm ci with scripts off and network to the registry only, then the commands offline).',
    oneOf(['off', 'registry']),
    'off',
  ),
  VERDICT_VALIDATION_REGISTRY: v(
    'npm registry URL of the install step; a lockfile resolving anything outside it is refused.',
    registryUrl,
    'https://registry.npmjs.org/',
  ),
  VERDICT_E2B_COST_PER_SECOND_USD: v(
    "USD per second of e2b sandbox time recorded against the budget (default: e2b's published rates for the default 2 vCPU / 512 MiB sandbox, 0.00003025; see docs/validation.md).",
    rateDollars,
  ),
};

/** An S3 key prefix: surrounding slashes dropped (the storage adds the one separator). */
const keyPrefix = trimmed
  .transform((value) => value.replace(/^\/+|\/+$/g, ''))
  .describe('key prefix, like verdict/evidence');

const evidence = {
  VERDICT_EVIDENCE_ARTIFACTS: v(
    '1: command outputs of validation are stored and attached to execution-claim findings as evidence (docs/evidence.md).',
    flag,
    '0',
  ),
  VERDICT_EVIDENCE_REQUIRE_ARTIFACTS: v(
    '1: an execution claim left without an artifact is marked evidenceStatus unverified (severity kept); no effect unless VERDICT_EVIDENCE_ARTIFACTS=1.',
    flag,
    '0',
  ),
  VERDICT_EVIDENCE_STORE: v(
    'Where artifacts go: local (VERDICT_EVIDENCE_DIR), s3 (an S3-compatible bucket), none (not stored, logged as no_artifact_storage).',
    oneOf(['local', 's3', 'none']),
    'local',
  ),
  VERDICT_EVIDENCE_DIR: v(
    "Directory of the local artifact store (default: evidence/ in VERDICT_DB_PATH's directory, ./data/evidence).",
    trimmed,
  ),
  VERDICT_EVIDENCE_PUBLIC_BASE_URL: v(
    'Base URL artifacts are served at: an artifact links to <url>/<key> (unset: local artifacts show their key, s3 ones a presigned URL).',
    baseUrl,
  ),
  VERDICT_EVIDENCE_S3_BUCKET: v(
    'Bucket of the s3 store (required with VERDICT_EVIDENCE_STORE=s3); credentials come from the AWS SDK chain (AWS_ACCESS_KEY_ID, ...).',
    trimmed,
  ),
  VERDICT_EVIDENCE_S3_REGION: v('Region of that bucket.', trimmed, 'us-east-1'),
  VERDICT_EVIDENCE_S3_ENDPOINT: v(
    'Endpoint of an S3-compatible store (MinIO, R2, ...; unset: AWS S3).',
    baseUrl,
  ),
  VERDICT_EVIDENCE_S3_PREFIX: v('Prefix of every artifact key in the bucket (unset: none).', keyPrefix),
  VERDICT_EVIDENCE_S3_FORCE_PATH_STYLE: v(
    '1: address the bucket as <endpoint>/<bucket>/<key> instead of <bucket>.<endpoint>/<key> (most S3-compatible stores).',
    flag,
    '0',
  ),
};

const providers = {
  VERDICT_RUNNER_PROVIDER: v('Model provider (codex: the local codex CLI).', provider, 'codex'),
  VERDICT_RUNNER_MODEL: v(
    'Model id for that provider (codex defaults to gpt-5-codex; the others need one).',
    trimmed,
  ),
  VERDICT_RUNNER_SHADOW_MODEL: v(
    'A second model whose review is stored as shadowReview and never published (unset: none).',
    trimmed,
  ),
  VERDICT_RUNNER_SHADOW_PROVIDER: v("Provider of the shadow model (default: the primary's).", provider),
  VERDICT_RUNNER_SHADOW_TIMEOUT_MS: v(
    'Shadow model call timeout in ms (default: the smaller of VERDICT_RUNNER_TIMEOUT_MS and 120000).',
    integer(1000, 86_400_000),
  ),
  OPENROUTER_API_KEY: v('OpenRouter API key.', trimmed),
  VERDICT_OPENROUTER_API_KEY: v('OpenRouter API key, read when OPENROUTER_API_KEY is unset.', trimmed),
  OPENAI_API_KEY: v(
    'OpenAI API key (not needed when VERDICT_OPENAI_BASE_URL names another server than api.openai.com).',
    trimmed,
  ),
  VERDICT_OPENAI_API_KEY: v('OpenAI API key, read when OPENAI_API_KEY is unset.', trimmed),
  ANTHROPIC_API_KEY: v('Anthropic API key.', trimmed),
  VERDICT_ANTHROPIC_API_KEY: v('Anthropic API key, read when ANTHROPIC_API_KEY is unset.', trimmed),
  VERDICT_OPENROUTER_BASE_URL: v('OpenRouter API base URL.', baseUrl, 'https://openrouter.ai/api/v1'),
  VERDICT_OPENAI_BASE_URL: v(
    'OpenAI API base URL, or any OpenAI-compatible server: Ollama, vLLM, LM Studio (docs/local-review.md).',
    baseUrl,
    'https://api.openai.com/v1',
  ),
  VERDICT_ANTHROPIC_BASE_URL: v('Anthropic API base URL.', baseUrl, 'https://api.anthropic.com/v1'),
  VERDICT_OPENROUTER_REQUIRE_FREE: v(
    'OpenRouter free-only guard: only models the catalog prices at 0 are used; it fails closed, only exactly 0 turns it off.',
    onUnlessZero,
    '1',
  ),
  VERDICT_OPENROUTER_MAX_TOKENS: v(
    'max_tokens of every call of every HTTP provider when set (unset: none for openrouter and openai).',
    integer(1, 10_000_000),
  ),
  VERDICT_ANTHROPIC_MAX_TOKENS: v(
    'max_tokens of Anthropic calls (VERDICT_OPENROUTER_MAX_TOKENS wins when set).',
    integer(1, 10_000_000),
    '8192',
  ),
  VERDICT_ANTHROPIC_VERSION: v('anthropic-version header of Anthropic calls.', trimmed, '2023-06-01'),
  VERDICT_MODEL_PRICES: v(
    'Price overrides over the built-in openai and anthropic rates, USD per million tokens: {"openai/gpt-4o":{"input":2.5,"output":10}}.',
    priceOverrides,
  ),
  VERDICT_RUNNER_BIN: v('The binary the codex provider runs.', trimmed, 'codex'),
  VERDICT_RUNNER_HOME: v('CODEX_HOME of the codex provider (where the CLI keeps its login).', trimmed),
};

const budget = {
  VERDICT_REVIEW_CHUNK_TOKENS: v('Diff tokens one model call carries.', integer(1000, 2_000_000), '60000'),
  VERDICT_REVIEW_FILE_TOKENS: v(
    "Tokens of one file's diff before it is clipped with a marker (at most VERDICT_REVIEW_CHUNK_TOKENS).",
    integer(100, 2_000_000),
    '12000',
  ),
  VERDICT_REVIEW_MAX_CHUNKS: v(
    'Model calls per review at most; files beyond are listed as not reviewed.',
    integer(1, 1000),
    '12',
  ),
  VERDICT_REVIEW_CONCURRENCY: v(
    'Parts of one review sent to the model at once; a synthesis call then writes the overview.',
    integer(1, 64),
    '4',
  ),
  VERDICT_MODEL_CONTEXT_TOKENS: v(
    "The model's context window in tokens, over Verdict's table of common models (docs/review-engine.md).",
    integer(1000, 10_000_000),
  ),
  VERDICT_PUBLISH_ON_RUNNER_FAILURE: v(
    '1: a model answer that stays unusable gives a degraded result saying so instead of a failed run.',
    flag,
    '0',
  ),
  VERDICT_VERIFICATION: v(
    'Verification of the findings before they are posted: 0 turns it off; unset: on for openrouter, openai and anthropic, off for codex (1 turns it on there).',
    flag,
  ),
  VERDICT_VERIFICATION_THRESHOLD: v(
    'A verified finding is posted at or above this score of 100 (review.verification.threshold in .github/verdict.yml wins).',
    integer(0, 100),
    '70',
  ),
  VERDICT_VERIFIER_MODEL: v(
    "The model of the verification calls, of the primary's provider (unset: VERDICT_RUNNER_MODEL).",
    trimmed,
  ),
};

const queue = {
  VERDICT_QUEUE_URL: v(
    "A Verdict server's base URL: a worker claims through its /queue routes (needs VERDICT_QUEUE_TOKEN).",
    baseUrl,
  ),
  VERDICT_QUEUE_TOKEN: v("That server's VERDICT_QUEUE_WORKER_TOKEN (needs VERDICT_QUEUE_URL).", text),
  VERDICT_QUEUE_DB_PATH: v(
    'A SQLite queue file a worker claims from (default: the store at VERDICT_DB_PATH; :memory: a process-local queue).',
    text,
  ),
};

const tokens = {
  VERDICT_OPERATOR_ADMIN_TOKEN: v(
    'Operator admin routes: queue repair, keys, settings, repository config.',
    trimmed,
  ),
  VERDICT_OPERATOR_READ_TOKEN: v('Ordinary operator GET routes.', trimmed),
  VERDICT_OPERATOR_COMMAND_TOKEN: v('Operator command creation.', trimmed),
  VERDICT_OPERATOR_BRIDGE_TOKEN: v('Command bridge: command updates and command reads.', trimmed),
  VERDICT_QUEUE_ADMIN_TOKEN: v('/queue/jobs and /queue/stats.', trimmed),
  VERDICT_QUEUE_ENQUEUE_TOKEN: v('/queue/enqueue.', trimmed),
  VERDICT_QUEUE_WORKER_TOKEN: v(
    '/queue/claim, /queue/renew, /queue/ack, /queue/fail, /queue/release.',
    trimmed,
  ),
};

const http = {
  VERDICT_PUBLIC_URL: v(
    "Base URL clients reach this server at: new API keys' apiBaseUrl, OpenRouter's HTTP-Referer (default: the request's host).",
    baseUrl,
  ),
  VERDICT_OPERATOR_CACHE_MS: v(
    "How long identical operator snapshot and PR-detail reads are served from memory, in ms (0: off); this process's writes drop it.",
    integer(0, 15_000),
    '1000',
  ),
  VERDICT_WEBHOOK_INFLIGHT_BYTES: v(
    'Webhook body bytes held in memory at once over all requests, unsigned ones included, counted as they arrive: a quarter is kept for bodies that declare at most 1 MiB, and one client address holds at most a quarter of the rest (or one maximum-size body); past it a webhook answers 503 ingress_busy (Retry-After: 1).',
    integer(1024, 16 * 1024 * 1024 * 1024),
    String(100 * 1024 * 1024),
  ),
  VERDICT_REQUEST_TIMEOUT_MS: v(
    "Time a client has to send a whole request, headers and body, in ms (GitHub's delivery timeout); past it the connection is answered 408 and closed.",
    integer(100, 300_000),
    '10000',
  ),
};

const scheduler = {
  VERDICT_SCHEDULER: v(
    '0: this server runs no scheduled jobs (the command bridge, watchdog, maintenance, pr-agent-loop); run `npm run bridge`.',
    flag,
    '1',
  ),
  VERDICT_CRON_AUTHORITY: v(
    'live: the command bridge executes operator commands; shadow: it only plans them (dryRun) and leaves them queued.',
    oneOf(['live', 'shadow']),
    'live',
  ),
  VERDICT_DELIVERY_RETENTION_DAYS: v(
    'Finished webhook deliveries older than this many days are deleted hourly (0 keeps them all).',
    integer(0, 3650),
    '30',
  ),
  VERDICT_WATCHDOG_ALERT_URL: v(
    'Where watchdog messages and every alert are POSTed as JSON (unset: no delivery, log, analytics and the SCM view only).',
    httpUrl,
  ),
  VERDICT_TELEGRAM_BOT_TOKEN: v(
    'Telegram bot token: alerts of a repository whose configuration sets alerts.telegram and alerts.target (a chat id) are sent there.',
    trimmed,
  ),
  VERDICT_TELEGRAM_API_URL: v(
    'Telegram Bot API base URL (a local fake in tests).',
    baseUrl,
    'https://api.telegram.org',
  ),
};

const dashboard = {
  VERDICT_OPERATOR_UI_ENABLED: v(
    '1: serve the operator dashboard (/operator/pull-requests, ..., /api/* proxy, sign-in); 0: its paths are not routed.',
    flag,
    '0',
  ),
  VERDICT_OPERATOR_UI_TOKEN: v(
    'Dashboard token: Authorization: Bearer <token>, or POST /operator/auth/token for a browser session (unset: no token sign-in).',
    trimmed,
  ),
  GITHUB_CLIENT_ID: v(
    'The GitHub App\'s OAuth client id (Probot\'s name), for "Sign in with GitHub" on the dashboard.',
    trimmed,
  ),
  GITHUB_CLIENT_SECRET: v("The GitHub App's OAuth client secret (Probot's name).", trimmed),
  VERDICT_UI_ALLOWED_LOGINS: v(
    'GitHub logins allowed to sign in to the dashboard (case-insensitive); with no logins and no orgs nobody is.',
    list(z.string().toLowerCase()),
  ),
  VERDICT_UI_ALLOWED_ORGS: v(
    'GitHub organisations whose members may sign in to the dashboard (case-insensitive).',
    list(z.string().toLowerCase()),
  ),
  VERDICT_UI_SESSION_TTL_HOURS: v('Lifetime of a dashboard session, in hours.', integer(1, 24 * 90), '12'),
  VERDICT_UI_BACKEND_URL: v(
    'Operator API the dashboard proxy /api/* forwards to (default: this server, http://127.0.0.1:<PORT>).',
    baseUrl,
  ),
};

const setup = {
  GH_ORG: v(
    "First run without App credentials: register the App from app.yml on this organisation (Probot's name; unset: on the signed-in user's account).",
    trimmed
      .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/, 'must be a GitHub organisation login')
      .describe('organisation login'),
  ),
  VERDICT_SETUP_ALLOW_REMOTE: v(
    '1: the first-run App registration (GET / without App credentials) also answers clients that are not on this machine.',
    flag,
    '0',
  ),
};

/** The catalogue in the order of `.env.example`, by section. */
export const SECTIONS = [
  { title: 'Server', variables: server },
  { title: "GitHub App (Probot's variables)", variables: github },
  { title: 'Store', variables: store },
  { title: 'Ingress', variables: ingress },
  { title: 'Product and publication', variables: publication },
  { title: 'Worker', variables: worker },
  { title: 'Validation', variables: validation },
  { title: 'Evidence artifacts (docs/evidence.md)', variables: evidence },
  { title: 'Review engine: model providers', variables: providers },
  { title: 'Review engine: context budget', variables: budget },
  { title: 'Queue selection (for worker processes)', variables: queue },
  { title: 'Service tokens (Authorization: Bearer <token>; unset: nobody gets in)', variables: tokens },
  { title: 'Public address and HTTP limits', variables: http },
  { title: 'Scheduled jobs and the command bridge', variables: scheduler },
  { title: 'Operator dashboard', variables: dashboard },
  { title: 'First-run setup (registering the GitHub App from app.yml)', variables: setup },
] as const;

export const VARIABLES = {
  ...server,
  ...github,
  ...store,
  ...ingress,
  ...publication,
  ...worker,
  ...validation,
  ...evidence,
  ...providers,
  ...budget,
  ...queue,
  ...tokens,
  ...http,
  ...scheduler,
  ...dashboard,
  ...setup,
};

export type VariableName = keyof typeof VARIABLES;
type LegacyName<N> = N extends `VERDICT_${infer Rest}` ? `REVIEWBOT_${Rest}` : never;

/**
 * The environment Verdict reads (Probot's style): every documented variable (see the catalogue for each
 * one's documentation) and the legacy spelling of each `VERDICT_` one. Other variables may be present.
 */
export type ProcessEnv = { [K in VariableName]?: string } & {
  [K in VariableName as LegacyName<K>]?: string;
} & { [name: string]: string | undefined };

type Parsed<E> =
  E extends Variable<infer S, infer D> ? z.output<S> | (D extends string ? never : undefined) : never;

/** The parsed value of every variable: `undefined` only for an unset variable without a default. */
export type Settings = { readonly [K in VariableName]: Parsed<(typeof VARIABLES)[K]> };

/** The legacy spelling of a `VERDICT_` variable (`REVIEWBOT_…`), or null for a variable without one. */
export function legacyName(name: string): string | null {
  return name.startsWith(CANONICAL_PREFIX) ? LEGACY_PREFIX + name.slice(CANONICAL_PREFIX.length) : null;
}

/**
 * The raw value of a variable with the nullish prefix fallback, and the variable that supplied it (the
 * one a user should fix): `VERDICT_<name>` when it is set at all, even empty, else `REVIEWBOT_<name>`.
 */
export function lookup(env: ProcessEnv, name: VariableName): { variable: string; raw: string | undefined } {
  const legacy = legacyName(name);
  if (legacy !== null && env[name] === undefined && env[legacy] !== undefined) {
    return { variable: legacy, raw: env[legacy] };
  }
  return { variable: name, raw: env[name] };
}

/**
 * Every variable of the catalogue, parsed: an unset or blank value takes the default; the first invalid
 * value throws a ConfigError naming the variable that supplied it.
 */
export function parseEnv(env: ProcessEnv): Settings {
  const settings: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(VARIABLES) as Array<[VariableName, Variable]>) {
    const { variable, raw } = lookup(env, name);
    const value = raw === undefined || raw.trim() === '' ? entry.default : raw;
    if (value === undefined) continue;
    const parsed = entry.schema.safeParse(value);
    if (!parsed.success) throw new ConfigError(variable, parsed.error.issues[0]?.message ?? 'is invalid');
    settings[name] = parsed.data;
  }
  return settings as Settings;
}

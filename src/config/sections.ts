import { z } from 'zod';
import {
  baseUrl,
  DEFAULT_BOT_HANDLES,
  dollars,
  flag,
  handles,
  httpUrl,
  integer,
  keyPrefix,
  list,
  oneOf,
  onUnlessZero,
  priceOverrides,
  provider,
  rateDollars,
  registryUrl,
  text,
  trimmed,
  v,
} from './schemas.js';

/** The catalogue of variables, by section (env.ts assembles it, docs.ts prints it). */
export const server = {
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

export const github = {
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

export const store = {
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

export const ingress = {
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

export const publication = {
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

export const worker = {
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
  VERDICT_INTAKE_THREAD: v(
    '1: on a SQLite file, `npm start` records webhook deliveries in a thread of their own with its own store connection, so the commit (statements, compression, fsync) runs beside webhook intake instead of on its event loop; 0: in the server thread. PostgreSQL commits on its own server either way.',
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

export const validation = {
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

export const evidence = {
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

export const providers = {
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

export const budget = {
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

export const queue = {
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

export const tokens = {
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

export const http = {
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

export const scheduler = {
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

export const dashboard = {
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

export const setup = {
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

/** The bindings and variables of the native edge worker (wrangler.jsonc names them). */
export type QueueMessage = {
  deliveryId: string;
  event: string;
  /** The raw JSON body, inline when its message stays within 96 KiB. */
  body?: string;
  /** The R2 key of the raw body when it was offloaded (review-engine 8). */
  bodyKey?: string;
};

/** The parts of Cloudflare's binding types this worker uses (no @cloudflare/workers-types dependency). */
export type KV = {
  get(key: string): Promise<string | null>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
  delete(key: string): Promise<void>;
};
export type R2 = {
  put(key: string, value: string): Promise<unknown>;
  get(key: string): Promise<{ text(): Promise<string> } | null>;
};
export type QueueProducer<T> = { send(message: T): Promise<void> };
export type D1Statement = {
  bind(...values: unknown[]): D1Statement;
  run(): Promise<unknown>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<{ results: T[] }>;
};
export type D1 = {
  prepare(sql: string): D1Statement;
  exec(sql: string): Promise<unknown>;
  /** The statements in one transaction: all are written or none. */
  batch(statements: D1Statement[]): Promise<unknown[]>;
};

export type Fetcher = { fetch(input: string, init?: RequestInit): Promise<Response> };
export type DurableNamespace = { idFromName(name: string): unknown; get(id: unknown): Fetcher };

export type Env = {
  DELIVERIES: KV;
  PAYLOADS?: R2;
  REVIEW_QUEUE: QueueProducer<QueueMessage>;
  DB: D1;
  GITHUB_WEBHOOK_SECRET?: string;
  DEDUPE_TTL_SECONDS?: string;
  VERDICT_BOT_HANDLES?: string;
  LEASES: DurableNamespace;
  /** The review containers on Cloudflare: the ReviewContainer Durable Object namespace, one instance per run. */
  REVIEW_CONTAINERS?: DurableNamespace;
  /** A container behind a service binding (tests); without either, VERDICT_CONTAINER_URL (local runs). */
  CONTAINER?: Fetcher;
  VERDICT_CONTAINER_URL?: string;
  /** The validation sandboxes on Cloudflare: the ValidationSandbox Durable Object namespace, one per run. */
  VALIDATION_SANDBOXES?: DurableNamespace;
  /** A sandbox behind a service binding (tests); without either, VERDICT_SANDBOX_URL (local runs). */
  SANDBOX?: Fetcher;
  VERDICT_SANDBOX_URL?: string;
  VERDICT_PUBLISH_MODE?: string;
  MAX_ATTEMPTS?: string;
  LEASE_MS?: string;
  APP_ID?: string;
  PRIVATE_KEY?: string;
  GHE_HOST?: string;
  GITHUB_API_URL?: string;
  /** Command bridge cron authority (3.5): `live` claims commands, anything else is `shadow`. */
  VERDICT_BRIDGE_AUTHORITY?: string;
  /**
   * Local runs only (`npm run native:dev`, tests): the container process reaches `state.internal` and
   * `broker.internal` through the public origin with this token in `x-verdict-internal-token`. Never set
   * on Cloudflare, where the container's outbound requests to those hosts are intercepted instead.
   */
  VERDICT_INTERNAL_DEV_TOKEN?: string;
  /** Where every alert is delivered (as in the Node runtime); absent: alerts are only kept in D1. */
  VERDICT_WATCHDOG_ALERT_URL?: string;
  /** Telegram delivery of a repository's alerts (its configuration's `alerts.telegram` and `target`). */
  VERDICT_TELEGRAM_BOT_TOKEN?: string;
  VERDICT_TELEGRAM_API_URL?: string;
};

/** Payloads above this many encoded bytes go to R2 and the queue message carries the key (review-engine 8). */
export const OFFLOAD_BYTES = 96 * 1024;
export const DEFAULT_DEDUPE_TTL_SECONDS = 604800;

/** `DEDUPE_TTL_SECONDS`, default 604800; KV refuses a TTL under 60 s, so a smaller value is raised to 60. */
export function dedupeTtl(env: Env): number {
  const n = Number(env.DEDUPE_TTL_SECONDS);
  return Number.isInteger(n) && n > 0 ? Math.max(60, n) : DEFAULT_DEDUPE_TTL_SECONDS;
}

import { z } from 'zod';

/**
 * The contract between the native runtime's edge worker (ingress, queue consumer, cron, lease Durable
 * Object) and its review container (review-engine 4.2). The container has no database and no App key:
 * it reads and writes state through `state.internal` and gets installation tokens from
 * `broker.internal`, both answered by the outer worker (on Cloudflare by the container's outbound
 * interception; in local runs the container sends them to `VERDICT_INTERNAL_ORIGIN` with the host it
 * meant in `x-verdict-internal-host`). Both sides parse every body with these schemas.
 */

export const INTERNAL_HOSTS = ['state.internal', 'broker.internal', 'sandbox.internal'] as const;
export type InternalHost = (typeof INTERNAL_HOSTS)[number];
/** Header naming the internal host a request meant, when it is sent to a local origin instead. */
export const INTERNAL_HOST_HEADER = 'x-verdict-internal-host';
/** Header of the local-run token (`VERDICT_INTERNAL_DEV_TOKEN` / `VERDICT_INTERNAL_TOKEN`, docs/native.md). */
export const INTERNAL_TOKEN_HEADER = 'x-verdict-internal-token';

/** POST /review on the container (port 8080): one review of one run. */
export const containerReviewRequestSchema = z.object({
  runId: z.string().min(1),
  reviewKey: z.string().min(1),
  repo: z.string().regex(/^[^/\s]+\/[^/\s]+$/),
  prNumber: z.number().int().positive(),
  headSha: z.string().min(7),
  installationId: z.number().int().positive(),
  trigger: z.string().min(1),
  /** The review key's variant (`comment-{id}` for a comment command), null for an automatic review. */
  variant: z.string().min(1).nullable().default(null),
  /** `live` publishes to GitHub; `shadow` reviews and stores but publishes nothing (review-engine 8). */
  publishMode: z.enum(['live', 'shadow']),
  /** The dispatch lease's owner token: every state write carries it and is refused once it is lost. */
  leaseToken: z.string().min(1),
  /** The lease the token holds: the run's own (absent) or the bridge's `publish:{runId}` of a retry-publish. */
  leaseName: z.string().min(1).optional(),
  attempt: z.number().int().min(1),
  /** `review` (default): the run's review; `retry-publish`: publish the run's stored result again (3.5). */
  mode: z.enum(['review', 'retry-publish']).default('review'),
});
export type ContainerReviewRequest = z.infer<typeof containerReviewRequestSchema>;

export const containerReviewResponseSchema = z.object({
  runId: z.string(),
  status: z.enum(['completed', 'skipped', 'failed']),
  reason: z.string().optional(),
  error: z.string().optional(),
  /** Whether a failed run may be retried by the consumer. */
  retry: z.boolean().optional(),
});
export type ContainerReviewResponse = z.infer<typeof containerReviewResponseSchema>;

/** Error body of the container: 503 `container_busy` / `container_stopping`, 400 `invalid_request`. */
export const containerErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** GET /health on the container. Phase names are Verdict's decision (the spec leaves them "not shown"). */
export const CONTAINER_PHASES = [
  'idle',
  'hydrating',
  'reviewing',
  'publishing',
  'flushing',
  'stopping',
] as const;
export type ContainerPhase = (typeof CONTAINER_PHASES)[number];
export const containerHealthSchema = z.object({
  ok: z.boolean(),
  phase: z.enum(CONTAINER_PHASES),
  runId: z.string().nullable(),
});

/**
 * The tables a review reads and writes, and how the worker scopes the rows it hands over: `pr` rows of
 * the run's pull request, `repo` rows of its repository, `global` all rows, `write` none (written only).
 * `key` is the table's primary key; `generated` marks an auto-increment key the container must not send
 * for a row it created (such rows go in `insert`, the worker assigns the key).
 */
export type StateTable = {
  table: string;
  key: string[];
  scope: 'pr' | 'repo' | 'global' | 'write';
  repoColumn?: string;
  prColumn?: string;
  generated?: boolean;
  /**
   * A unique key naming what a row records (a GitHub event): a flushed row whose event is stored already
   * is that event, kept as stored, and the rest of the flush is written (the reactions step may have
   * recorded it while the review ran).
   */
  eventKey?: string;
};
/** A table of the run's pull request (`repo`, `pr_number`) whose rows have a generated `id`. */
const generatedPrTable = (table: string, eventKey?: string): StateTable => ({
  table,
  key: ['id'],
  scope: 'pr',
  repoColumn: 'repo',
  prColumn: 'pr_number',
  generated: true,
  eventKey,
});
export const NATIVE_STATE_TABLES: StateTable[] = [
  { table: 'repositories', key: ['full_name'], scope: 'repo', repoColumn: 'full_name' },
  { table: 'pull_requests', key: ['repo', 'number'], scope: 'pr', repoColumn: 'repo', prColumn: 'number' },
  { table: 'runs', key: ['id'], scope: 'pr', repoColumn: 'repo', prColumn: 'pr_number' },
  generatedPrTable('findings'),
  generatedPrTable('review_threads'),
  generatedPrTable('publications'),
  { table: 'review_policies', key: ['workspace'], scope: 'global' },
  { table: 'memory_contexts', key: ['id'], scope: 'global' },
  { table: 'memory_knowledge', key: ['repo', 'path'], scope: 'global' },
  { table: 'memory_clusters', key: ['id'], scope: 'repo', repoColumn: 'repo' },
  generatedPrTable('memory_feedback', 'event_key'),
  generatedPrTable('memory_withheld'),
  { table: 'traces', key: ['id'], scope: 'write' },
  { table: 'spans', key: ['seq'], scope: 'write', generated: true },
];

const rowSchema = z.record(z.string(), z.unknown());

/** POST state.internal/bundle: every scoped row the review of `runId` needs. */
const leased = {
  runId: z.string().min(1),
  leaseToken: z.string().min(1),
  leaseName: z.string().min(1).optional(),
};
export const stateBundleRequestSchema = z.object(leased);
export const stateBundleSchema = z.object({ tables: z.record(z.string(), z.array(rowSchema)) });
export type StateBundle = z.infer<typeof stateBundleSchema>;

/**
 * POST state.internal/flush: rows the review created (`insert`) or changed (`upsert`, by key). `final`
 * is the last flush of a review (the container answers /review only after it succeeded); a checkpoint
 * flush (on a termination abort) is `final: false`. 409 `lease_lost` when the lease token is no longer
 * the run's owner: nothing of that flush is written.
 */
export const stateFlushSchema = z.object({
  ...leased,
  final: z.boolean(),
  tables: z.record(
    z.string(),
    z.object({ upsert: z.array(rowSchema).default([]), insert: z.array(rowSchema).default([]) }),
  ),
});
export type StateFlush = z.infer<typeof stateFlushSchema>;

/** POST broker.internal/token: an installation token for the run's installation (the key stays outside). */
export const brokerTokenRequestSchema = z.object({ installationId: z.number().int().positive(), ...leased });
export const brokerTokenSchema = z.object({ token: z.string().min(1), expiresAt: z.string() });

/** The executors a sandbox runs (NAMES.md "Validation executors"; e2b is called from the container itself). */
export const SANDBOX_EXECUTORS = ['bubblewrap', 'local'] as const;

/** The largest checkout archive sent to the sandbox (gzip'd tar, before base64). */
export const SANDBOX_ARCHIVE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What a sandbox runs (its `POST /run`): a validation plan of the executor named, over the checkout
 * given as a gzip'd tar (base64), within `timeoutMs`.
 */
export const sandboxJobSchema = z.object({
  executor: z.enum(SANDBOX_EXECUTORS),
  /** The operator trusts the repository's committed commands (VERDICT_VALIDATION_TRUSTED_REPOS). */
  trusted: z.boolean(),
  plan: z.object({
    kind: z.literal('run'),
    source: z.enum(['standard', 'repo-config']),
    packageManager: z.enum(['npm', 'pnpm', 'yarn', 'bun']).optional(),
    commands: z
      .array(
        z.object({
          check: z.enum(['test', 'typecheck', 'lint', 'build']),
          ecosystem: z.enum(['javascript', 'python', 'go', 'custom']),
          argv: z.array(z.string()).min(1),
        }),
      )
      .min(1),
  }),
  timeoutMs: z.number().int().positive(),
  archive: z.string().max(Math.ceil(SANDBOX_ARCHIVE_MAX_BYTES / 3) * 4),
});
export type SandboxJob = z.infer<typeof sandboxJobSchema>;

/**
 * POST sandbox.internal/run (review-engine 4.2: "`sandbox.internal` handles validation"): the sandbox job
 * of a run, under its lease. The worker hands the job to the run's sandbox and answers with its outcome;
 * 503 `no_sandbox` when the deployment has none.
 */
export const sandboxRunRequestSchema = sandboxJobSchema.extend(leased);

const commandResultSchema = z.object({
  check: z.enum(['test', 'typecheck', 'lint', 'build']),
  command: z.string(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  durationMs: z.number(),
  timedOut: z.boolean(),
  outputTail: z.string(),
  outputBytes: z.number(),
  outputTruncated: z.boolean(),
});

/** A validation outcome as an executor returns it (src/validation/types.ts `ValidationOutcome`). */
export const validationOutcomeSchema = z.object({
  executor: z.string(),
  status: z.enum(['passed', 'failed', 'timed_out', 'skipped', 'refused', 'not_run', 'error']),
  evidence: z.string(),
  commands: z.array(commandResultSchema),
  artifacts: z.array(
    z.object({ id: z.string(), kind: z.literal('command_output'), command: z.string(), content: z.string() }),
  ),
  note: z.string().optional(),
  install: z
    .object({
      result: z.enum(['installed', 'failed', 'timed_out', 'refused', 'not_installed']),
      packageManager: z.enum(['npm', 'pnpm', 'yarn', 'bun']).optional(),
      registry: z.string().optional(),
      command: z.string().optional(),
      exitCode: z.number().int().nullable().optional(),
      signal: z.string().nullable().optional(),
      durationMs: z.number().optional(),
      outside: z.array(z.string()).optional(),
    })
    .optional(),
});

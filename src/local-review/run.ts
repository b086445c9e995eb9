import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import { ScratchReview, type Env } from '../compose/scratch-review.js';
import type { LineComment } from '../publish/line-comments.js';
import { REPO_CONFIG_FILE } from '../repo-config/load.js';
import { resolveRepoConfig, type RepoConfig } from '../repo-config/schema.js';
import { FINDING_SEVERITIES, severityRank } from '../review/output.schema.js';
import { selectProviders } from '../review/providers/index.js';
import { readRunResult, type RunResult } from '../review/run-result.js';
import type { FindingRecord } from '../store/findings.js';
import type { RunRecord } from '../store/runs.js';
import { fileAt, hasUncommittedChanges, LocalReviewError } from './git.js';
import { gitSource, readLocalChange, type LocalChange } from './git-source.js';

/**
 * The trigger of a local review: the user asked for this review, as with a `@verdict review` comment, so
 * admission treats it as manual (MANUAL_TRIGGERS): `review.auto`, `branches`, drafts, the file-count
 * limit and the review filters do not stop it; a repository disabled and paused authors would (neither
 * exists in the scratch store).
 */
export const LOCAL_REVIEW_TRIGGER = 'local_review';

/** The longest a local review may take before it is given up. */
export const LOCAL_REVIEW_TIMEOUT_MS = 30 * 60_000;

export type Severity = (typeof FINDING_SEVERITIES)[number];

export type LocalReviewOptions = {
  /** A directory in the repository's work tree. */
  repo: string;
  base?: string;
  head?: string;
  /** The environment the provider configuration is read from (`VERDICT_RUNNER_PROVIDER`, keys, ...). */
  env: Env;
  log: Logger;
  /** Progress lines (what is reviewed, with which model), for stderr. */
  progress?: (line: string) => void;
  timeoutMs?: number;
};

/** A line comment of the review, as the shadow publisher would have posted it. */
export type ReviewComment = Pick<LineComment, 'path' | 'line' | 'start_line' | 'body'>;

export type LocalReview =
  | { kind: 'no_changes'; change: LocalChange }
  | {
      kind: 'reviewed';
      change: LocalChange;
      run: RunRecord;
      /** The run's stored analysis. */
      result: RunResult;
      /** The run's findings as stored (after the strictness filter and the anchor check). */
      findings: FindingRecord[];
      /** The review body as the publisher rendered it, and its line comments. */
      body: string;
      comments: ReviewComment[];
      /** Problems that did not stop the review (an invalid `.github/verdict.yml`, a degraded analysis). */
      notes: string[];
    };

/** `.github/verdict.yml` at the base commit, as a pull-request review reads it (defaults when absent). */
export async function repoConfigAt(
  root: string,
  commit: string,
): Promise<{ config: RepoConfig; notes: string[] }> {
  const path = `.github/${REPO_CONFIG_FILE}`;
  const text = await fileAt(root, commit, path);
  if (text === null) return { config: resolveRepoConfig(null).config, notes: [] };
  const notes: string[] = [];
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    const first = (error as Error).message.split('\n')[0];
    return {
      config: resolveRepoConfig(null).config,
      notes: [`${path} could not be parsed (${first}): the defaults apply`],
    };
  }
  if (raw !== null && typeof raw === 'object' && '_extends' in raw) {
    // Probot follows `_extends` into another repository; a local review reads only this one.
    const { _extends: _ignored, ...rest } = raw as Record<string, unknown>;
    raw = rest;
    notes.push(`${path}: _extends is not followed by a local review`);
  }
  const resolved = resolveRepoConfig(raw);
  if (resolved.error !== null) notes.push(`${path} is invalid, so the defaults apply: ${resolved.error}`);
  return { config: resolved.config, notes };
}

/**
 * Reviews a local git change with the configured provider through the same pipeline as a pull-request
 * review (ScratchReview): the change is served as the pull request `local/<name>#1` by a local GitHub
 * API reading git, reviewed by the review worker and engine, and published in shadow mode; what the
 * publisher would have posted is read back from the publication ledger. Nothing outlives the call: the
 * scratch store and the local API are gone when it returns. A git problem or a review that did not
 * complete throws a LocalReviewError.
 */
export async function runLocalReview(opts: LocalReviewOptions): Promise<LocalReview> {
  const change = await readLocalChange(opts);
  if (opts.head === undefined && (await hasUncommittedChanges(change.root))) {
    opts.progress?.('note: the work tree has uncommitted changes; only committed changes are reviewed');
  }
  if (change.files.length === 0) return { kind: 'no_changes', change };
  const { config: standalone, notes } = await repoConfigAt(change.root, change.base.sha);
  const source = gitSource(change);
  const scratch = await ScratchReview.open({
    sources: [source],
    env: { ...opts.env, VERDICT_RUNNER_SHADOW_MODEL: undefined },
    concurrency: 1,
    log: opts.log,
    providers: (config) => ({ ...selectProviders(config.review.providers), shadow: null }),
    fileLinks: false,
  });
  try {
    const { primary } = scratch.providers;
    opts.progress?.(
      `reviewing ${change.files.length} changed file(s) of ${change.head.ref} (${change.head.sha.slice(0, 7)}) since its merge base ${change.mergeBase.slice(0, 7)} with ${change.base.ref}, with ${primary.name}${primary.model ? ` ${primary.model}` : ''}`,
    );
    // Tried once: its user is waiting, and a failure is reported at once instead of retried later.
    const runId = await scratch.request(source, {
      trigger: LOCAL_REVIEW_TRIGGER,
      standalone,
      maxAttempts: 1,
    });
    const timeoutMs = opts.timeoutMs ?? LOCAL_REVIEW_TIMEOUT_MS;
    const run = await scratch.settled(runId, timeoutMs);
    if (!run) throw new LocalReviewError('review_failed', 'the review run disappeared');
    if (run.status !== 'completed') {
      const why =
        run.status === 'skipped'
          ? `not reviewed: ${describeRefusal(run)}`
          : run.status === 'failed'
            ? (run.error ?? 'the review failed')
            : `not finished within ${Math.round(timeoutMs / 1000)} s`;
      throw new LocalReviewError('review_failed', why);
    }
    const result = readRunResult(run.result);
    if (!result) throw new LocalReviewError('review_failed', 'the run holds no analysis');
    const published = (await scratch.store.publications.listForPr(run.repo, run.prNumber)).filter(
      (p) => p.runId === run.id && p.kind === 'review',
    );
    // Shadow publication records the review once (nothing can refuse it), with its line comments.
    const review = published.at(-1);
    if (!review || review.body === null) {
      throw new LocalReviewError(
        'review_failed',
        `the review was not published: ${run.publishError ?? 'no review in the ledger'}`,
      );
    }
    const request = review.request as { comments?: ReviewComment[] } | null;
    const unknown = [...new Set(scratch.server.requests.unknown)];
    if (unknown.length > 0) {
      // The engine asked the local GitHub API for something it does not serve: the review may lack it.
      notes.push(`the local GitHub API did not know ${unknown.join(', ')}`);
    }
    if (run.analysisStatus === 'degraded')
      notes.push('the analysis is degraded: some parts could not be reviewed');
    return {
      kind: 'reviewed',
      change,
      run,
      result,
      findings: await scratch.store.findings.listForRun(run.id),
      body: review.body,
      comments: (request?.comments ?? []).map((c) => ({
        path: c.path,
        line: c.line,
        ...(c.start_line !== undefined ? { start_line: c.start_line } : {}),
        body: c.body,
      })),
      notes,
    };
  } finally {
    await scratch.close();
  }
}

function describeRefusal(run: RunRecord): string {
  const admission = (run.result as { admission?: { reason?: string; detail?: string } } | null)?.admission;
  return admission?.detail ? `${admission.reason}: ${admission.detail}` : (run.reason ?? 'refused');
}

/**
 * Whether a finding the review publishes is at or above `threshold` (blocker > high > medium > low).
 * Every stored finding is published: anchored ones as line comments, the rest in the body.
 */
export function failsAt(findings: readonly Pick<FindingRecord, 'severity'>[], threshold: Severity): boolean {
  const limit = severityRank(threshold);
  return findings.some((f) => severityRank(f.severity) <= limit);
}

/** A line comment's location: `path:line`, or `path:start-end` for a range. */
export function commentLocation(c: ReviewComment): string {
  return c.start_line !== undefined && c.start_line !== c.line
    ? `${c.path}:${c.start_line}-${c.line}`
    : `${c.path}:${c.line}`;
}

/** The markdown output: the review body, then each line comment as `path:line` and its body. */
export function reviewMarkdown(review: Extract<LocalReview, { kind: 'reviewed' }>): string {
  const parts = [review.body.trimEnd()];
  for (const c of review.comments) parts.push(`---\n\n${commentLocation(c)}\n\n${c.body.trimEnd()}`);
  return parts.join('\n\n');
}

/** The JSON output: the run result (the stored analysis) with the run's findings as stored. */
export function reviewJson(review: Extract<LocalReview, { kind: 'reviewed' }>): unknown {
  return { ...review.result, findings: review.findings };
}

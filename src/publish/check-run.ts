import type { GitHubClient } from '../github/client.js';
import type { ReviewPolicy } from '../policy/policy.schema.js';
import type { FindingRecord } from '../store/findings.js';
import type { RunRecord } from '../store/runs.js';
import { NO_SERVER_RETRY, type Found } from './ledger.js';
import { annotationBatches, type Annotation } from './line-comments.js';
import { refusalNotice } from './notice.js';
import { ofRun, splitRepo, type PublishContext } from './publisher-deps.js';
import { MERGE_STATUS_BADGE } from './render.js';
import { mergeStatus, mergeStatusCause, type CheckConclusion, type PublishableAnalysis } from './status.js';

/** Most pages of check runs read to find the run's own (100 a page). */
const MAX_CHECK_PAGES = 10;

/**
 * The run's check run on a commit, found by its external id (the run id, set when Verdict creates it)
 * among the check runs of that name: what an interrupted creation may have left.
 */
export async function findOwnCheckRun(
  gh: GitHubClient,
  r: { repo: string; sha: string; name: string; runId: string },
): Promise<Found | null> {
  const { owner, repo } = splitRepo(r.repo);
  let pages = 0;
  for await (const page of gh.paginate.iterator(gh.rest.checks.listForRef, {
    owner,
    repo,
    ref: r.sha,
    check_name: r.name,
    filter: 'all',
    per_page: 100,
  })) {
    const own = page.data.find((c) => c.external_id === r.runId);
    if (own) return { id: String(own.id), nodeId: own.node_id ?? null };
    if (++pages >= MAX_CHECK_PAGES) break;
  }
  return null;
}

/**
 * Whether a check run already shows a completion: completed, with at least the annotations sent so far
 * (the Checks API appends annotations, so a completion sent twice would show them twice).
 */
async function completedCheck(
  gh: GitHubClient,
  run: RunRecord,
  checkRunId: string,
  annotations: number,
): Promise<Found | null> {
  const { owner, repo } = splitRepo(run.repo);
  const { data } = await gh.rest.checks.get({ owner, repo, check_run_id: Number(checkRunId) });
  const shown = data.output?.annotations_count ?? 0;
  return data.status === 'completed' && shown >= annotations ? { id: String(data.id) } : null;
}

/**
 * The run's check run (review-engine 3.1, docs/publication.md "Check run"): created in progress when the
 * review starts, completed when it is published, failed or refused. Every creation carries the run id
 * as `external_id`, so an interrupted creation is found on GitHub instead of creating a second one; a
 * completion interrupted is checked on GitHub before it is sent again.
 */
export class CheckRunPublisher {
  constructor(private readonly ctx: PublishContext) {}

  private get name() {
    return this.ctx.deps.checkName;
  }

  private find(gh: GitHubClient, run: RunRecord, sha: string) {
    return () => findOwnCheckRun(gh, { repo: run.repo, sha, name: this.name, runId: run.id });
  }

  /**
   * The call completing the run's check run: a patch of the one whose id is known, else one created
   * completed, with the run id as its external id (found by it after an interrupted creation).
   * `lookedUp`: the patch is looked for on GitHub before it is sent again, so Octokit does not retry it.
   */
  private completion(
    gh: GitHubClient,
    run: RunRecord,
    known: string | null,
    headSha: string,
    conclusion: CheckConclusion,
    output: { title: string; summary: string; annotations?: Annotation[] },
    lookedUp: boolean,
  ) {
    const { owner, repo } = splitRepo(run.repo);
    const completed = {
      status: 'completed',
      conclusion,
      completed_at: new Date().toISOString(),
      output,
    } as const;
    return () =>
      known
        ? gh.rest.checks.update({
            owner,
            repo,
            check_run_id: Number(known),
            ...completed,
            ...(lookedUp ? NO_SERVER_RETRY : {}),
          })
        : gh.rest.checks.create({
            owner,
            repo,
            name: this.name,
            head_sha: headSha,
            external_id: run.id,
            ...completed,
            ...NO_SERVER_RETRY,
          });
  }

  /** Creates the run's check run, in progress, when the review starts (checks enabled). */
  async start(gh: GitHubClient, run: RunRecord, headSha: string, policy: ReviewPolicy): Promise<void> {
    if (!policy.statusChecks.enabled || run.checkRunId) return;
    const { owner, repo } = splitRepo(run.repo);
    const started = await this.ctx.ledger.send(
      ofRun(run, 'check_run', 'in_progress', { step: 'check:start' }),
      () =>
        gh.rest.checks.create({
          owner,
          repo,
          name: this.name,
          head_sha: headSha,
          external_id: run.id,
          status: 'in_progress',
          started_at: new Date().toISOString(),
          output: {
            title: 'Review in progress',
            summary: `${this.ctx.deps.productName} is reviewing this pull request.`,
          },
          ...NO_SERVER_RETRY,
        }),
      { find: this.find(gh, run, headSha) },
    );
    if (started.ok && started.id) await this.ctx.deps.store.runs.update(run.id, { checkRunId: started.id });
  }

  /**
   * The run's check run id: the one on the run, else the one its start published although the run did
   * not keep it (an attempt interrupted after GitHub created it; looked up by external id), else null.
   */
  async knownId(gh: GitHubClient, run: RunRecord): Promise<string | null> {
    if (run.checkRunId) return run.checkRunId;
    if (this.ctx.deps.mode === 'shadow') return null;
    const key = { runId: run.id, repo: run.repo, prNumber: run.prNumber, step: 'check:start' };
    const id = await this.ctx.ledger.receiptOf(key, 'check_run', this.find(gh, run, run.headSha ?? ''));
    if (id) await this.ctx.deps.store.runs.update(run.id, { checkRunId: id });
    return id;
  }

  /** Completes the run's check run after an analysis that failed for good (nothing else is published). */
  async fail(gh: GitHubClient, run: RunRecord, error: string): Promise<void> {
    const checkRunId = await this.knownId(gh, run);
    if (!checkRunId) return;
    const summary = `The review could not be completed: ${error.slice(0, 2000)}`;
    const output = { title: 'Review failed', summary };
    await this.ctx.ledger.send(
      ofRun(run, 'check_run', summary, { step: 'check:fail' }),
      this.completion(gh, run, checkRunId, run.headSha ?? '', 'neutral', output, false),
    );
  }

  /**
   * Completes a neutral check run for a review admission refused in a way the author can act on (NAMES.md:
   * `repository_disabled` says how to enable the repository; `auto_review_disabled` what would have it
   * reviewed): one line with why and how. Nothing else is published. Skipped when status checks are off.
   */
  async notice(
    gh: GitHubClient,
    run: RunRecord,
    notice: { headSha: string; reason: string; detail: string; hint: string | null },
    policy: ReviewPolicy,
  ): Promise<void> {
    if (!policy.statusChecks.enabled) return;
    const { title, summary } = refusalNotice(this.ctx.deps.productName, notice);
    const checkRunId = await this.knownId(gh, run);
    await this.ctx.ledger.send(
      ofRun(run, 'check_run', summary, { step: 'check:notice' }),
      this.completion(gh, run, checkRunId, notice.headSha, 'neutral', { title, summary }, false),
      checkRunId ? {} : { find: this.find(gh, run, notice.headSha) },
    );
  }

  /**
   * Completes the check run of a published review: patched when its id is known, created completed
   * otherwise; neutral when status checks are off (only a check the run already has is completed).
   * Anchored findings become annotations, 50 per request. Answers the error, or null.
   */
  async complete(
    gh: GitHubClient,
    run: RunRecord,
    policy: ReviewPolicy,
    c: {
      conclusion: CheckConclusion;
      commitId: string;
      analysis: PublishableAnalysis;
      findings: FindingRecord[];
    },
  ): Promise<string | null> {
    const { owner, repo } = splitRepo(run.repo);
    const enabled = policy.statusChecks.enabled;
    const known = await this.knownId(gh, run);
    if (!enabled && !known) return null;
    const conclusion: CheckConclusion = enabled ? c.conclusion : 'neutral';
    const { title, summary } = checkSummary(c.analysis, c.commitId, enabled);
    const [first = [], ...rest] = annotationBatches(c.findings);
    const output = { title, summary, ...(first.length > 0 ? { annotations: first } : {}) };
    const request = first.length > 0 ? { annotations: first } : undefined;
    const outcome = await this.ctx.ledger.send(
      ofRun(run, 'check_run', summary, { request, step: 'check:complete' }),
      this.completion(gh, run, known, c.commitId, conclusion, output, true),
      {
        find: known ? () => completedCheck(gh, run, known, first.length) : this.find(gh, run, c.commitId),
      },
    );
    if (!outcome.ok) return outcome.error;
    if (outcome.id && !known) await this.ctx.deps.store.runs.update(run.id, { checkRunId: outcome.id });
    const checkRunId = known ?? outcome.id;
    let sent = first.length;
    for (const [i, batch] of rest.entries()) {
      sent += batch.length;
      const through = sent;
      const more = await this.ctx.ledger.send(
        ofRun(run, 'check_run', `annotations ${i + 2} of ${rest.length + 1}`, {
          request: { annotations: batch },
          step: `check:annotations:${i + 2}`,
        }),
        () =>
          gh.rest.checks.update({
            owner,
            repo,
            check_run_id: Number(checkRunId),
            output: { title, summary, annotations: batch },
            ...NO_SERVER_RETRY,
          }),
        { find: () => completedCheck(gh, run, checkRunId!, through) },
      );
      if (!more.ok) return more.error;
    }
    return null;
  }
}

/** The check run's title and summary: the merge status first, then confidence, findings and coverage. */
function checkSummary(analysis: PublishableAnalysis, commitId: string, enabled: boolean) {
  const { output: review, coverage } = analysis;
  const status = mergeStatus(analysis);
  const findings = review.findings.length;
  const summary = [
    `**Merge Status: ${MERGE_STATUS_BADGE[status]}** (${mergeStatusCause(analysis)}). The model's merge verdict: “${review.mergeVerdict.replace(/\s+/g, ' ').slice(0, 500)}”`,
    `Analyst confidence ${review.confidenceScore}/5 · ${findings} finding(s) · coverage ${
      coverage?.complete ? 'complete' : 'incomplete'
    } at ${commitId.slice(0, 7)}${enabled ? '' : ' · status checks are off in the review policy'}`,
  ].join('\n\n');
  return { title: `${status}: ${findings} finding(s)`, summary };
}

import type { Logger } from 'pino';
import type { GitHubClient } from '../github/client.js';
import type { ReviewPublisher } from '../publish/review-publisher.js';
import type { ReviewEngine } from '../review/engine.js';
import type { Store } from '../store/index.js';
import type { RunRecord } from '../store/runs.js';
import type { ReviewExecution, ReviewExecutor } from './review-consumer.js';

/** What the flow asks of publication (ReviewPublisher in production). */
export type Publication = {
  startCheck: ReviewPublisher['startCheck'];
  failCheck: ReviewPublisher['failCheck'];
  noticeCheck: ReviewPublisher['noticeCheck'];
  publish(gh: GitHubClient, run: RunRecord, assertLease: () => Promise<void>): Promise<unknown>;
};

/**
 * What the flow asks of feedback (src/memory/feedback.ts in production): before the analysis, the
 * reactions on the PR's line comments and the resolutions waiting for a later head; after it, the findings
 * its accepted dispositions resolved. Each answers the work to do, or null when there is none (a first
 * review of a pull request has nothing to read, and no span).
 */
export type FeedbackCollection = {
  beforeAnalysis(run: RunRecord): Promise<((gh: GitHubClient) => Promise<unknown>) | null>;
  afterAnalysis(run: RunRecord): Promise<(() => Promise<unknown>) | null>;
};

/**
 * One review job, as the worker runs it: the engine admits the run, the check run shows it in progress,
 * the engine analyses, then publication publishes the stored analysis (or fails the check run when the
 * review failed for good). The engine never publishes and publication never reviews; each publication
 * step is a span of the review's trace, and its failure is recorded on the run (`publishStatus: failed`)
 * and logged, never turned into a failed review. Without a publication, nothing is published. Feedback
 * (when given) is read before the analysis and counted after it, each a span of the trace too, whose
 * failure is logged and changes nothing else.
 */
export function reviewFlow(deps: {
  engine: ReviewEngine;
  publication: Publication | null;
  store: Store;
  log: Logger;
  feedback?: FeedbackCollection | null;
}): ReviewExecutor {
  const { engine, publication, store } = deps;
  const feedback = deps.feedback ?? null;
  return (run, job, ctx) =>
    engine.open(run, job, ctx).traced(async (session): Promise<ReviewExecution> => {
      const admission = await session.admit();
      const stored = async () => (await store.runs.get(run.id)) ?? run;
      const publish = async (
        gh: GitHubClient,
        name: string,
        step: (p: Publication, gh: GitHubClient) => Promise<unknown>,
      ) => {
        if (!publication) return;
        const error = await session.step(name, () => step(publication, gh));
        if (error === null) return;
        await store.runs
          .update(run.id, { publishStatus: 'failed', publishError: `${name}: ${error}` })
          .catch(() => undefined);
      };
      if (!admission.admitted) {
        // A refusal the author should see (the repository is disabled, or its branch is not reviewed).
        const notice = admission.notice;
        if (notice) {
          await publish(notice.gh, 'notice-check', async (p) => {
            await ctx.assertLease();
            await p.noticeCheck(notice.gh, await stored(), notice);
          });
        }
        return admission.execution;
      }
      const { gh, headSha } = admission;
      await publish(gh, 'start-check', async (p) => {
        await ctx.assertLease();
        await p.startCheck(gh, await stored(), headSha);
      });
      const collect = feedback ? await feedback.beforeAnalysis(run) : null;
      if (collect) await session.step('feedback', () => collect(gh));
      const execution = await session.analyse();
      const counted =
        feedback && execution.status === 'completed' ? await feedback.afterAnalysis(await stored()) : null;
      if (counted) await session.step('feedback-addressed', counted);
      if (execution.status === 'completed') {
        // Its failures are recorded on the run and in the ledger, never on the analysis.
        await publish(gh, 'publish', async (p) => p.publish(gh, await stored(), () => ctx.assertLease()));
      } else if (execution.status === 'failed' && (!execution.retry || job.attempts >= job.maxAttempts)) {
        await publish(gh, 'fail-check', async (p) => p.failCheck(gh, await stored(), execution.error));
      }
      return execution;
    });
}

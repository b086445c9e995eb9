import type { GitHubClient } from '../github/client.js';
import { statusOf } from '../review/gather.js';
import type { FindingRecord } from '../store/findings.js';

/** One line comment of a review, as `POST /repos/{o}/{r}/pulls/{n}/reviews` takes it in `comments[]`. */
export type LineComment = {
  path: string;
  /** The last line of the range (GitHub's `line`), on the new side. */
  line: number;
  side: 'RIGHT';
  /** The first line of a multi-line range. */
  start_line?: number;
  start_side?: 'RIGHT';
  body: string;
};

/** An anchored finding as a line comment: one line, or `start_line`..`line` for a range. */
export function lineCommentFor(
  finding: Pick<FindingRecord, 'path' | 'line' | 'endLine'>,
  body: string,
): LineComment {
  const start = finding.line!;
  const end = finding.endLine ?? start;
  return end > start
    ? { path: finding.path!, line: end, side: 'RIGHT', start_line: start, start_side: 'RIGHT', body }
    : { path: finding.path!, line: start, side: 'RIGHT', body };
}

/** A check-run annotation (`output.annotations[]` of the Checks API). */
export type Annotation = {
  path: string;
  start_line: number;
  end_line: number;
  annotation_level: 'failure' | 'warning' | 'notice';
  title: string;
  message: string;
};

/** The Checks API takes at most 50 annotations per request; more are sent in further updates. */
export const ANNOTATIONS_PER_REQUEST = 50;

const LEVEL: Record<string, Annotation['annotation_level']> = {
  blocker: 'failure',
  high: 'failure',
  medium: 'warning',
  low: 'notice',
};

/** Anchored findings as annotations, in batches of 50. */
export function annotationBatches(findings: readonly FindingRecord[]): Annotation[][] {
  const annotations: Annotation[] = findings
    .filter((f) => f.line !== null && f.path !== null && !f.outsideDiff)
    .map((f) => ({
      path: f.path!,
      start_line: f.line!,
      end_line: f.endLine ?? f.line!,
      annotation_level: LEVEL[f.severity] ?? 'notice',
      title: `${f.severity.toUpperCase()}: ${f.title}`.slice(0, 255),
      message: (f.body.trim() || f.title).slice(0, 60_000),
    }));
  const batches: Annotation[][] = [];
  for (let i = 0; i < annotations.length; i += ANNOTATIONS_PER_REQUEST) {
    batches.push(annotations.slice(i, i + ANNOTATIONS_PER_REQUEST));
  }
  return batches;
}

/**
 * Finds which line comments GitHub refuses, after it refused a whole review (422 names no comment):
 * each comment is posted alone in a pending review (no `event`), which is deleted at once when GitHub
 * accepts it. A comment answered 422 is invalid. Any other failure stops the probe: every comment not yet
 * shown valid is then taken as invalid (the review is still posted, with them in its body).
 */
export async function probeComments<C extends LineComment>(
  gh: GitHubClient,
  r: { owner: string; repo: string; pullNumber: number; commitId: string; comments: readonly C[] },
): Promise<{ invalid: Array<{ comment: C; error: string }>; error: string | null }> {
  const invalid: Array<{ comment: C; error: string }> = [];
  for (const [i, comment] of r.comments.entries()) {
    const { path, line, side, start_line, start_side, body } = comment;
    try {
      const { data } = await gh.rest.pulls.createReview({
        owner: r.owner,
        repo: r.repo,
        pull_number: r.pullNumber,
        commit_id: r.commitId,
        comments: [{ path, line, side, ...(start_line ? { start_line, start_side } : {}), body }],
      });
      await gh.rest.pulls.deletePendingReview({
        owner: r.owner,
        repo: r.repo,
        pull_number: r.pullNumber,
        review_id: data.id,
      });
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (statusOf(error) === 422) {
        invalid.push({ comment, error: message });
        continue;
      }
      for (const rest of r.comments.slice(i)) {
        invalid.push({ comment: rest, error: `not checked: ${message}` });
      }
      return { invalid, error: message };
    }
  }
  return { invalid, error: null };
}

/** How a reply in a finding's thread starts, by disposition (2.4). */
export const DISPOSITION_REPLY: Record<string, string> = {
  resolved: 'Resolved',
  false_positive: 'Marked a false positive',
  no_longer_applicable: 'No longer applicable',
};

export const RESOLVE_THREAD = `mutation ($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } }
}`;

export const MINIMIZE_OUTDATED = `mutation ($subjectId: ID!) {
  minimizeComment(input: { subjectId: $subjectId, classifier: OUTDATED }) { minimizedComment { isMinimized } }
}`;

export const REVIEW_THREADS = `query ($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}`;

type ThreadsPage = {
  repository: {
    pullRequest: {
      reviewThreads: {
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
        nodes: Array<{
          id: string;
          isResolved: boolean;
          comments: { nodes: Array<{ databaseId: number | null }> };
        }>;
      };
    } | null;
  } | null;
};

/** Most pages of review threads read to find one (100 threads a page). */
const MAX_THREAD_PAGES = 10;

/** The GraphQL id of the review thread whose first comment is `commentId`, or null. */
export async function findThreadId(
  gh: GitHubClient,
  owner: string,
  name: string,
  number: number,
  commentId: string,
): Promise<string | null> {
  let cursor: string | null = null;
  for (let page = 0; page < MAX_THREAD_PAGES; page++) {
    const data: ThreadsPage = await gh.graphql<ThreadsPage>(REVIEW_THREADS, { owner, name, number, cursor });
    const threads = data.repository?.pullRequest?.reviewThreads;
    if (!threads) return null;
    const found = threads.nodes.find((t) => String(t.comments.nodes[0]?.databaseId ?? '') === commentId);
    if (found) return found.id;
    if (!threads.pageInfo.hasNextPage) return null;
    cursor = threads.pageInfo.endCursor;
  }
  return null;
}

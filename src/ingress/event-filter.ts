/**
 * The Node event filter (review-engine 6.1): a pure classifier of a verified webhook. The caller looks up
 * stored state (the PR's stored head) and passes it in.
 */
export type PrRef = {
  owner: string;
  repo: string;
  number: number;
  headSha: string;
  baseRef: string;
  headRef: string;
  draft: boolean;
  author: string | null;
  title: string;
  body: string | null;
  labels: string[];
  installationId: number | null;
  changedFiles: number | null;
  beforeSha: string | null;
};

export type PrCommentRef = {
  owner: string;
  repo: string;
  number: number;
  commentId: number;
  body: string;
  author: string;
  association: string | null;
  installationId: number | null;
};

export type ReviewTrigger = 'opened' | 'reopened' | 'ready_for_review' | 'synchronize';

export type IgnoreReason =
  | 'unsupported_event'
  | 'unsupported_action'
  | 'no_op'
  | 'merge_commit'
  | 'no_changes'
  | 'not_pull_request_comment'
  | 'missing_identity'
  | 'ping';

export type FilterOutcome =
  | { action: 'review'; trigger: ReviewTrigger; pr: PrRef; waitingKey: string }
  | { action: 'update_metadata'; pr: PrRef }
  | { action: 'command'; pr: PrCommentRef }
  | { action: 'installation' }
  | { action: 'ignore'; reason: IgnoreReason };

const REVIEW_ACTIONS = new Set<string>(['opened', 'reopened', 'ready_for_review', 'synchronize']);
const MERGE_PHRASES = ['merge branch ', 'merge pull request ', 'merge remote-tracking branch '];

export function waitingJobKey(owner: string, repo: string, pr: number): string {
  return `${owner}/${repo}#${pr}:latest-waiting`;
}

/** `{owner}/{repo}#{pr}@{headSha}`, plus `:{variant}` (NAMES.md: a colon joins the variant). */
export function reviewKey(
  owner: string,
  repo: string,
  pr: number,
  headSha: string,
  variant?: string | null,
): string {
  const base = `${owner}/${repo}#${pr}@${headSha}`;
  return variant ? `${base}:${variant}` : base;
}

/** Merge detection from supplied metadata: a merge flag, several parents, or a merge-commit message. */
export function isMergeCommit(meta: {
  merge?: boolean | null;
  parents?: number | null;
  message?: string | null;
}): boolean {
  if (meta.merge === true) return true;
  if (typeof meta.parents === 'number' && meta.parents > 1) return true;
  const message = (meta.message ?? '').trimStart().toLowerCase();
  return MERGE_PHRASES.some((phrase) => message.startsWith(phrase));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function repoIdentity(p: any): { owner: string; repo: string } | null {
  const owner = str(p?.repository?.owner?.login) ?? str(p?.repository?.full_name)?.split('/')[0] ?? null;
  const repo = str(p?.repository?.name);
  return owner && repo ? { owner, repo } : null;
}

function prRef(p: any): PrRef | null {
  const id = repoIdentity(p);
  const pr = p?.pull_request;
  const number = num(pr?.number) ?? num(p?.number);
  const headSha = str(pr?.head?.sha);
  if (!id || number === null || !headSha) return null;
  return {
    ...id,
    number,
    headSha,
    baseRef: str(pr?.base?.ref) ?? '',
    headRef: str(pr?.head?.ref) ?? '',
    draft: pr?.draft === true,
    author: str(pr?.user?.login),
    title: str(pr?.title) ?? '',
    body: str(pr?.body),
    labels: Array.isArray(pr?.labels)
      ? pr.labels.map((l: any) => str(l?.name)).filter((n: string | null): n is string => !!n)
      : [],
    installationId: num(p?.installation?.id),
    changedFiles: num(pr?.changed_files),
    beforeSha: str(p?.before),
  };
}

function mergeMeta(p: any): { merge?: boolean | null; parents?: number | null; message?: string | null } {
  const head = p?.head_commit ?? null;
  const last = Array.isArray(p?.commits) && p.commits.length > 0 ? p.commits[p.commits.length - 1] : null;
  const parents = Array.isArray(head?.parents)
    ? head.parents.length
    : Array.isArray(last?.parents)
      ? last.parents.length
      : null;
  return {
    merge: p?.merge === true || head?.merge === true || last?.merge === true,
    parents,
    message: str(head?.message) ?? str(last?.message),
  };
}

export function classifyEvent(
  event: string,
  payload: unknown,
  stored?: { headSha: string | null } | null,
): FilterOutcome {
  const p = payload as any;
  switch (event) {
    case 'ping':
      return { action: 'ignore', reason: 'ping' };
    case 'installation':
    case 'installation_repositories':
      return { action: 'installation' };
    case 'issue_comment': {
      if (p?.action !== 'created') return { action: 'ignore', reason: 'unsupported_action' };
      if (!p?.issue?.pull_request) return { action: 'ignore', reason: 'not_pull_request_comment' };
      const id = repoIdentity(p);
      const number = num(p?.issue?.number);
      const commentId = num(p?.comment?.id);
      const author = str(p?.comment?.user?.login);
      if (!id || number === null || commentId === null || !author)
        return { action: 'ignore', reason: 'missing_identity' };
      return {
        action: 'command',
        pr: {
          ...id,
          number,
          commentId,
          body: str(p?.comment?.body) ?? '',
          author,
          association: str(p?.comment?.author_association),
          installationId: num(p?.installation?.id),
        },
      };
    }
    case 'pull_request': {
      const action = str(p?.action) ?? '';
      if (action !== 'edited' && !REVIEW_ACTIONS.has(action))
        return { action: 'ignore', reason: 'unsupported_action' };
      const pr = prRef(p);
      if (!pr) return { action: 'ignore', reason: 'missing_identity' };
      if (action === 'edited') return { action: 'update_metadata', pr };
      if (p?.noChanges === true) return { action: 'ignore', reason: 'no_changes' };
      if (isMergeCommit(mergeMeta(p))) return { action: 'ignore', reason: 'merge_commit' };
      if (action === 'synchronize') {
        if (str(p?.before) !== null && p.before === p.after) return { action: 'ignore', reason: 'no_op' };
        // A head we already stored was already handled. Only `synchronize` is a no-op on it: opened,
        // reopened and ready_for_review are explicit requests and go on to admission.
        if (stored?.headSha && stored.headSha === pr.headSha) return { action: 'ignore', reason: 'no_op' };
      }
      return {
        action: 'review',
        trigger: action as ReviewTrigger,
        pr,
        waitingKey: waitingJobKey(pr.owner, pr.repo, pr.number),
      };
    }
    default:
      return { action: 'ignore', reason: 'unsupported_event' };
  }
}

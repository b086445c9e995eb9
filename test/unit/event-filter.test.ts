import { classifyEvent, isMergeCommit, reviewKey, waitingJobKey } from '../../src/ingress/event-filter.js';
import { example, prComment } from '../helpers/webhooks.js';

describe('event filter (review-engine 6.1)', () => {
  test.each(['opened', 'reopened', 'ready_for_review', 'synchronize'])(
    'pull_request.%s requests a review',
    (action) => {
      const payload = example('pull_request', action);
      const result = classifyEvent('pull_request', payload, null);
      expect(result).toMatchObject({
        action: 'review',
        trigger: action,
        pr: {
          owner: 'Codertocat',
          repo: 'Hello-World',
          number: payload.pull_request.number,
          headSha: payload.pull_request.head.sha,
        },
        waitingKey: `Codertocat/Hello-World#${payload.pull_request.number}:latest-waiting`,
      });
    },
  );

  test.each([
    'assigned',
    'closed',
    'converted_to_draft',
    'labeled',
    'locked',
    'review_request_removed',
    'review_requested',
    'unassigned',
    'unlabeled',
    'unlocked',
  ])('pull_request.%s is unsupported_action', (action) => {
    expect(classifyEvent('pull_request', example('pull_request', action))).toEqual({
      action: 'ignore',
      reason: 'unsupported_action',
    });
  });

  test('pull_request.edited updates metadata', () => {
    const payload = example('pull_request', 'opened');
    payload.action = 'edited';
    expect(classifyEvent('pull_request', payload)).toMatchObject({
      action: 'update_metadata',
      pr: { title: payload.pull_request.title },
    });
  });

  test('the PR reference carries metadata from the payload', () => {
    const payload = example('pull_request', 'opened');
    payload.installation = { id: 9 };
    payload.pull_request.draft = true;
    payload.pull_request.labels = [{ name: 'bug' }];
    const result = classifyEvent('pull_request', payload);
    expect(result).toMatchObject({
      pr: {
        baseRef: 'master',
        headRef: 'changes',
        draft: true,
        labels: ['bug'],
        installationId: 9,
        changedFiles: 1,
        author: 'Codertocat',
      },
    });
  });

  test('synchronize with before == after is no_op', () => {
    const payload = example('pull_request', 'synchronize');
    payload.before = payload.after;
    expect(classifyEvent('pull_request', payload)).toEqual({ action: 'ignore', reason: 'no_op' });
  });

  test('synchronize to the stored head is no_op; another stored head is a review', () => {
    const payload = example('pull_request', 'synchronize');
    const head = payload.pull_request.head.sha;
    expect(classifyEvent('pull_request', payload, { headSha: head })).toEqual({
      action: 'ignore',
      reason: 'no_op',
    });
    expect(classifyEvent('pull_request', payload, { headSha: 'x'.repeat(40) }).action).toBe('review');
  });

  test('opened / reopened on a stored head are still explicit requests', () => {
    const payload = example('pull_request', 'reopened');
    expect(classifyEvent('pull_request', payload, { headSha: payload.pull_request.head.sha }).action).toBe(
      'review',
    );
  });

  test('an explicit noChanges skips', () => {
    const payload = example('pull_request', 'synchronize');
    payload.noChanges = true;
    expect(classifyEvent('pull_request', payload)).toEqual({ action: 'ignore', reason: 'no_changes' });
  });

  test.each([
    [{ merge: true }],
    [{ head_commit: { merge: true } }],
    [{ head_commit: { parents: [{ sha: 'a' }, { sha: 'b' }] } }],
    [{ head_commit: { message: "Merge branch 'main' into feature" } }],
    [{ head_commit: { message: 'Merge pull request #12 from octo/fix' } }],
    [{ head_commit: { message: "merge remote-tracking branch 'origin/main'" } }],
  ])('merge commits are dropped (%j)', (meta) => {
    const payload = { ...example('pull_request', 'synchronize'), ...meta };
    expect(classifyEvent('pull_request', payload)).toEqual({ action: 'ignore', reason: 'merge_commit' });
  });

  test('a message that only mentions merging later is not a merge commit', () => {
    expect(isMergeCommit({ message: 'Fix the merge of configs' })).toBe(false);
    expect(isMergeCommit({ parents: 1, message: 'feat: merged view' })).toBe(false);
    const payload = {
      ...example('pull_request', 'synchronize'),
      head_commit: { message: 'Refactor: merge branch logic' },
    };
    expect(classifyEvent('pull_request', payload).action).toBe('review');
  });

  test('issue_comment.created on a PR is a command candidate with its author and association', () => {
    const result = classifyEvent(
      'issue_comment',
      prComment('@verdict help', { commentId: 5, association: 'MEMBER', login: 'mona' }),
    );
    expect(result).toEqual({
      action: 'command',
      pr: {
        owner: 'Codertocat',
        repo: 'Hello-World',
        number: 2,
        commentId: 5,
        body: '@verdict help',
        author: 'mona',
        association: 'MEMBER',
        installationId: 77,
      },
    });
  });

  test('issue comments: on a plain issue, edited or deleted are ignored', () => {
    expect(classifyEvent('issue_comment', example('issue_comment', 'created'))).toEqual({
      action: 'ignore',
      reason: 'not_pull_request_comment',
    });
    const edited = prComment('@verdict review');
    edited.action = 'edited';
    expect(classifyEvent('issue_comment', edited)).toEqual({
      action: 'ignore',
      reason: 'unsupported_action',
    });
    expect(classifyEvent('issue_comment', example('issue_comment', 'deleted')).action).toBe('ignore');
  });

  test('installation events, ping, and other events', () => {
    expect(classifyEvent('installation', example('installation', 'created'))).toEqual({
      action: 'installation',
    });
    expect(classifyEvent('installation_repositories', example('installation_repositories', 'added'))).toEqual(
      { action: 'installation' },
    );
    expect(classifyEvent('ping', example('ping'))).toEqual({ action: 'ignore', reason: 'ping' });
    expect(classifyEvent('push', example('push'))).toEqual({ action: 'ignore', reason: 'unsupported_event' });
  });

  test('a PR payload without identity is missing_identity', () => {
    const payload = example('pull_request', 'opened');
    delete payload.pull_request.head.sha;
    expect(classifyEvent('pull_request', payload)).toEqual({ action: 'ignore', reason: 'missing_identity' });
    expect(classifyEvent('pull_request', { action: 'opened' })).toEqual({
      action: 'ignore',
      reason: 'missing_identity',
    });
  });

  test('review keys and the waiting key', () => {
    expect(reviewKey('o', 'r', 5, 'abc')).toBe('o/r#5@abc');
    expect(reviewKey('o', 'r', 5, 'abc', 'manual-9')).toBe('o/r#5@abc:manual-9');
    expect(waitingJobKey('o', 'r', 5)).toBe('o/r#5:latest-waiting');
  });
});

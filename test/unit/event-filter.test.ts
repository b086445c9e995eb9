import { createRequire } from 'node:module';

import { classifyEvent, isMergeCommit, type FilterOutcome } from '../../src/ingress/event-filter.js';
import { reviewKey, waitingJobKey } from '../../src/review/keys.js';

type ExampleGroup = { name: string; actions: string[]; examples: any[] };
const examples: ExampleGroup[] = createRequire(import.meta.url)('@octokit/webhooks-examples');

function all(event: string): any[] {
  const group = examples.find((e) => e.name === event);
  if (!group || group.examples.length === 0) throw new Error(`no examples for ${event}`);
  return group.examples.map((p) => structuredClone(p));
}

/** A deep copy of the first example of an event (and action). */
function example(event: string, action?: string): any {
  const found = all(event).find((p) => action === undefined || p.action === action);
  if (!found) throw new Error(`no example for ${event}.${action}`);
  return found;
}

/** GitHub's issue_comment.created example (a comment on a plain issue), moved onto pull request #2. */
function prComment(): any {
  const payload = example('issue_comment', 'created');
  payload.issue.number = 2;
  payload.issue.pull_request = { url: 'https://api.github.com/repos/Codertocat/Hello-World/pulls/2' };
  payload.comment.id = 5550001;
  payload.comment.body = '@verdict review';
  payload.comment.user.login = 'mona';
  payload.comment.author_association = 'MEMBER';
  payload.installation = { id: 77 };
  return payload;
}

const REVIEW = ['opened', 'reopened', 'ready_for_review', 'synchronize'];
const ignore = (reason: string): FilterOutcome => ({ action: 'ignore', reason }) as FilterOutcome;

describe('pull_request examples from @octokit/webhooks-examples', () => {
  const prExamples = all('pull_request');

  test('the examples cover every review trigger and some other actions', () => {
    const actions = new Set(prExamples.map((p) => p.action));
    for (const a of REVIEW) expect(actions).toContain(a);
    expect([...actions].filter((a) => !REVIEW.includes(a)).length).toBeGreaterThan(5);
  });

  test.each(prExamples.map((p, i) => [`${p.action} #${i}`, p] as const))(
    'pull_request.%s classifies as expected',
    (_name, payload) => {
      const result = classifyEvent('pull_request', payload, null);
      if (REVIEW.includes(payload.action)) {
        const pr = payload.pull_request;
        expect(result).toEqual({
          action: 'review',
          trigger: payload.action,
          waitingKey: `Codertocat/Hello-World#${pr.number}:latest-waiting`,
          pr: {
            owner: 'Codertocat',
            repo: 'Hello-World',
            number: pr.number,
            headSha: pr.head.sha,
            baseRef: pr.base.ref,
            headRef: pr.head.ref,
            draft: pr.draft === true,
            author: pr.user.login,
            title: pr.title,
            body: pr.body,
            labels: pr.labels.map((l: { name: string }) => l.name),
            installationId: payload.installation?.id ?? null,
            changedFiles: pr.changed_files ?? null,
            beforeSha: payload.before ?? null,
          },
        });
      } else if (payload.action === 'edited') {
        expect(result.action).toBe('update_metadata');
      } else {
        expect(result).toEqual(ignore('unsupported_action'));
      }
    },
  );

  test('the synchronize example carries its before SHA; opened has none', () => {
    const sync = example('pull_request', 'synchronize');
    expect(classifyEvent('pull_request', sync)).toMatchObject({ pr: { beforeSha: sync.before } });
    expect(classifyEvent('pull_request', example('pull_request', 'opened'))).toMatchObject({
      pr: { beforeSha: null },
    });
  });
});

describe('pull_request metadata', () => {
  test('draft, label names, installation id and changed files come from the payload', () => {
    const payload = example('pull_request', 'opened');
    payload.installation = { id: 9 };
    payload.pull_request.draft = true;
    payload.pull_request.labels = [{ name: 'bug' }, { name: 'needs review' }];
    payload.pull_request.changed_files = 7;
    payload.pull_request.body = 'details';
    expect(classifyEvent('pull_request', payload)).toMatchObject({
      action: 'review',
      pr: {
        draft: true,
        labels: ['bug', 'needs review'],
        installationId: 9,
        changedFiles: 7,
        body: 'details',
        baseRef: 'master',
        headRef: 'changes',
      },
    });
  });

  test('a missing installation or changed_files is null; a missing draft is false', () => {
    const payload = example('pull_request', 'opened');
    delete payload.installation;
    delete payload.pull_request.changed_files;
    delete payload.pull_request.draft;
    expect(classifyEvent('pull_request', payload)).toMatchObject({
      pr: { installationId: null, changedFiles: null, draft: false },
    });
  });

  test('pull_request.edited updates metadata (hand-made from the opened example)', () => {
    const payload = example('pull_request', 'opened');
    payload.action = 'edited';
    payload.pull_request.title = 'A new title';
    payload.changes = { title: { from: 'Update the README with new information.' } };
    const result = classifyEvent('pull_request', payload, { headSha: payload.pull_request.head.sha });
    expect(result).toEqual({
      action: 'update_metadata',
      pr: expect.objectContaining({
        title: 'A new title',
        number: 2,
        headSha: payload.pull_request.head.sha,
      }),
    });
  });

  test('an unknown pull_request action is unsupported_action', () => {
    const payload = example('pull_request', 'opened');
    payload.action = 'milestoned';
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('unsupported_action'));
  });
});

describe('no-op updates', () => {
  test('synchronize with before == after is no_op', () => {
    const payload = example('pull_request', 'synchronize');
    expect(classifyEvent('pull_request', payload).action).toBe('review');
    payload.before = payload.after;
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('no_op'));
  });

  test('synchronize onto the stored head is no_op; a different or absent stored head reviews', () => {
    const payload = example('pull_request', 'synchronize');
    const head = payload.pull_request.head.sha;
    expect(classifyEvent('pull_request', payload, { headSha: head })).toEqual(ignore('no_op'));
    expect(classifyEvent('pull_request', payload, { headSha: 'f'.repeat(40) }).action).toBe('review');
    expect(classifyEvent('pull_request', payload, { headSha: null }).action).toBe('review');
    expect(classifyEvent('pull_request', payload, null).action).toBe('review');
    expect(classifyEvent('pull_request', payload).action).toBe('review');
  });

  test.each(['opened', 'reopened', 'ready_for_review'])(
    '%s on the stored head is still an explicit request',
    (action) => {
      const payload = example('pull_request', action);
      const stored = { headSha: payload.pull_request.head.sha };
      expect(classifyEvent('pull_request', payload, stored)).toMatchObject({
        action: 'review',
        trigger: action,
      });
    },
  );

  test('an explicit noChanges skips', () => {
    const payload = example('pull_request', 'synchronize');
    payload.noChanges = true;
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('no_changes'));
    payload.noChanges = false;
    expect(classifyEvent('pull_request', payload).action).toBe('review');
  });
});

describe('merge detection', () => {
  test.each([
    ['Merge branch ', { head_commit: { message: "Merge branch 'main' into feature" } }],
    ['Merge pull request ', { head_commit: { message: 'Merge pull request #12 from octo/fix\n\nFix it' } }],
    [
      'Merge remote-tracking branch ',
      { head_commit: { message: "Merge remote-tracking branch 'origin/main'" } },
    ],
    ['lower-case phrase', { head_commit: { message: "merge branch 'main' into feature" } }],
    ['upper-case phrase', { head_commit: { message: 'MERGE PULL REQUEST #1 from a/b' } }],
    ['payload merge flag', { merge: true }],
    ['head_commit merge flag', { head_commit: { merge: true, message: 'fix' } }],
    ['two head-commit parents', { head_commit: { message: 'fix', parents: [{ sha: 'a' }, { sha: 'b' }] } }],
    [
      'two parents in commits metadata',
      {
        commits: [{ sha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821', parents: [{ sha: 'a' }, { sha: 'b' }] }],
      },
    ],
    ['a merge message in commits metadata', { commits: [{ message: "Merge branch 'main'" }] }],
  ])('%s is merge_commit', (_name, meta) => {
    const payload = example('pull_request', 'synchronize');
    expect(classifyEvent('pull_request', payload).action).toBe('review');
    expect(classifyEvent('pull_request', { ...payload, ...meta })).toEqual(ignore('merge_commit'));
  });

  test.each(['opened', 'reopened', 'ready_for_review'])('also applies to %s', (action) => {
    const payload = {
      ...example('pull_request', action),
      head_commit: { message: 'Merge pull request #1 from a/b' },
    };
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('merge_commit'));
  });

  test.each([
    ['merge mentioned later', "Refactor: merge branch 'x' logic"],
    ['merge as a prefix of another word', 'Merged branch names are now shown'],
    ['the phrase without its trailing space', 'Merge branches'],
    ['a merge word only', 'merge'],
  ])('a message with %s is not a merge commit', (_name, message) => {
    expect(isMergeCommit({ message })).toBe(false);
    const payload = {
      ...example('pull_request', 'synchronize'),
      head_commit: { message, parents: [{ sha: 'a' }] },
    };
    expect(classifyEvent('pull_request', payload).action).toBe('review');
  });

  test('isMergeCommit reads each signal', () => {
    expect(isMergeCommit({})).toBe(false);
    expect(isMergeCommit({ merge: true })).toBe(true);
    expect(isMergeCommit({ merge: false, parents: 1, message: 'fix' })).toBe(false);
    expect(isMergeCommit({ parents: 2 })).toBe(true);
    expect(isMergeCommit({ parents: 1 })).toBe(false);
    expect(isMergeCommit({ message: "  Merge branch 'main'" })).toBe(true);
    expect(isMergeCommit({ merge: null, parents: null, message: null })).toBe(false);
  });
});

describe('issue_comment', () => {
  test('created on a pull request is a command candidate (text not parsed)', () => {
    expect(classifyEvent('issue_comment', prComment())).toEqual({
      action: 'command',
      pr: {
        owner: 'Codertocat',
        repo: 'Hello-World',
        number: 2,
        commentId: 5550001,
        body: '@verdict review',
        author: 'mona',
        association: 'MEMBER',
        installationId: 77,
      },
    });
  });

  test('any comment body is passed through unparsed', () => {
    const payload = prComment();
    payload.comment.body = 'just a remark';
    expect(classifyEvent('issue_comment', payload)).toMatchObject({
      action: 'command',
      pr: { body: 'just a remark' },
    });
  });

  test.each(all('issue_comment').map((p, i) => [`${p.action} #${i}`, p] as const))(
    'example %s (plain issue) is ignored with the right reason',
    (_name, payload) => {
      const reason = payload.action === 'created' ? 'not_pull_request_comment' : 'unsupported_action';
      expect(classifyEvent('issue_comment', payload)).toEqual(ignore(reason));
    },
  );

  test.each(['edited', 'deleted'])('%s on a pull request is unsupported_action', (action) => {
    const payload = prComment();
    payload.action = action;
    expect(classifyEvent('issue_comment', payload)).toEqual(ignore('unsupported_action'));
  });

  test('a PR comment without its author, comment id or repository is missing_identity', () => {
    const noAuthor = prComment();
    delete noAuthor.comment.user;
    const noId = prComment();
    delete noId.comment.id;
    const emptyLogin = prComment();
    emptyLogin.comment.user.login = '';
    const noRepo = prComment();
    delete noRepo.repository;
    for (const payload of [noAuthor, noId, emptyLogin, noRepo]) {
      expect(classifyEvent('issue_comment', payload)).toEqual(ignore('missing_identity'));
    }
  });
});

describe('other events', () => {
  test.each(all('installation').map((p) => [p.action, p] as const))('installation.%s', (_action, payload) => {
    expect(classifyEvent('installation', payload)).toEqual({ action: 'installation' });
  });

  test.each(all('installation_repositories').map((p) => [p.action, p] as const))(
    'installation_repositories.%s',
    (_action, payload) => {
      expect(classifyEvent('installation_repositories', payload)).toEqual({ action: 'installation' });
    },
  );

  test('ping is ignored as ping', () => {
    for (const payload of all('ping')) expect(classifyEvent('ping', payload)).toEqual(ignore('ping'));
  });

  test('push and other events are unsupported_event', () => {
    for (const payload of all('push'))
      expect(classifyEvent('push', payload)).toEqual(ignore('unsupported_event'));
    expect(classifyEvent('check_run', example('check_run'))).toEqual(ignore('unsupported_event'));
    // The event name decides, not the payload's shape.
    expect(classifyEvent('push', example('pull_request', 'opened'))).toEqual(ignore('unsupported_event'));
  });
});

describe('pull_request_review (competitor reviews)', () => {
  test('a submitted review is a competitor_review candidate with its identity', () => {
    const payload = example('pull_request_review', 'submitted');
    payload.installation = { id: 77 };
    expect(classifyEvent('pull_request_review', payload)).toEqual({
      action: 'competitor_review',
      pr: {
        owner: 'Codertocat',
        repo: 'Hello-World',
        number: 2,
        reviewId: 237895671,
        author: 'Codertocat',
        body: '',
        state: 'commented',
        submittedAt: payload.review.submitted_at,
        installationId: 77,
      },
    });
  });
  test('other actions are unsupported; a review without an author has no identity', () => {
    for (const payload of all('pull_request_review').filter((p) => p.action !== 'submitted'))
      expect(classifyEvent('pull_request_review', payload)).toEqual(ignore('unsupported_action'));
    const payload = example('pull_request_review', 'submitted');
    delete payload.review.user;
    expect(classifyEvent('pull_request_review', payload)).toEqual(ignore('missing_identity'));
  });
});

describe('missing identity', () => {
  test.each([
    ['head sha', (p: any) => delete p.pull_request.head.sha],
    ['empty head sha', (p: any) => (p.pull_request.head.sha = '')],
    ['repository', (p: any) => delete p.repository],
    ['repository name and full name', (p: any) => (delete p.repository.name, delete p.repository.full_name)],
    ['PR number', (p: any) => (delete p.pull_request.number, delete p.number)],
  ])('a pull_request without its %s is missing_identity', (_name, mutate) => {
    const payload = example('pull_request', 'synchronize');
    expect(classifyEvent('pull_request', payload).action).toBe('review');
    mutate(payload);
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('missing_identity'));
  });

  test('edited without identity is missing_identity too', () => {
    const payload = example('pull_request', 'opened');
    payload.action = 'edited';
    delete payload.pull_request;
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('missing_identity'));
  });

  test('the owner falls back to repository.full_name', () => {
    const payload = example('pull_request', 'opened');
    delete payload.repository.owner;
    expect(classifyEvent('pull_request', payload)).toMatchObject({
      action: 'review',
      pr: { owner: 'Codertocat', repo: 'Hello-World' },
    });
  });

  test.each([null, undefined, 'text', 42, {}])('a non-payload (%p) never throws', (payload) => {
    expect(classifyEvent('pull_request', payload)).toEqual(ignore('unsupported_action'));
    expect(classifyEvent('pull_request', { ...(payload as object), action: 'opened' })).toEqual(
      ignore('missing_identity'),
    );
    expect(classifyEvent('issue_comment', payload)).toEqual(ignore('unsupported_action'));
  });
});

describe('keys', () => {
  test('reviewKey without a variant', () => {
    expect(reviewKey('octo', 'repo', 5, 'abc123')).toBe('octo/repo#5@abc123');
    expect(reviewKey('octo', 'repo', 5, 'abc123', null)).toBe('octo/repo#5@abc123');
    expect(reviewKey('octo', 'repo', 5, 'abc123', '')).toBe('octo/repo#5@abc123');
  });

  test('reviewKey with a variant joins it with a colon (NAMES.md)', () => {
    expect(reviewKey('octo', 'repo', 5, 'abc123', 'manual-9')).toBe('octo/repo#5@abc123:manual-9');
    expect(reviewKey('octo', 'repo', 5, 'abc123', 'operator-1700000000')).toBe(
      'octo/repo#5@abc123:operator-1700000000',
    );
  });

  test('waitingJobKey', () => {
    expect(waitingJobKey('octo', 'repo', 5)).toBe('octo/repo#5:latest-waiting');
  });

  test('a review outcome carries the waiting key of its PR', () => {
    const payload = example('pull_request', 'opened');
    payload.pull_request.number = 41;
    expect(classifyEvent('pull_request', payload)).toMatchObject({
      pr: { number: 41 },
      waitingKey: 'Codertocat/Hello-World#41:latest-waiting',
    });
  });
});

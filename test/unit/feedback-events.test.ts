import { createRequire } from 'node:module';
import { parseCommand, parseThreadCommand } from '../../src/comment-commands/parse.js';
import { classifyEvent } from '../../src/ingress/event-filter.js';
import { classifyDelivery } from '../../src/ingress/webhook-handler.js';
import { learnedContextId, pathGlob } from '../../src/memory/feedback.js';
import { buildManifest, readAppYml } from '../../src/setup/manifest.js';

const examples: Array<{ name: string; examples: any[] }> = createRequire(import.meta.url)(
  '@octokit/webhooks-examples',
);
function all(event: string): any[] {
  return examples.find((e) => e.name === event)!.examples.map((p) => structuredClone(p));
}
function example(event: string, action: string): any {
  return all(event).find((p) => p.action === action)!;
}

/** GitHub's pull_request_review_comment.created example as a reply (in_reply_to_id) in thread 700. */
function reply(body: string): any {
  const payload = all('pull_request_review_comment').find((p) => p.action === 'created' && p.installation)!;
  payload.comment.in_reply_to_id = 700;
  payload.comment.body = body;
  return payload;
}

describe('parseThreadCommand (replies in Verdict threads)', () => {
  test('ignore and learn, case-insensitive, with punctuation glued to the verb', () => {
    expect(parseThreadCommand('@verdict ignore')).toEqual({
      kind: 'thread_command',
      verb: 'ignore',
      handle: 'verdict',
    });
    expect(parseThreadCommand('  @Verdict IGNORE. this is noise')).toMatchObject({ verb: 'ignore' });
    expect(parseThreadCommand('@reviewbot ignore')).toMatchObject({ verb: 'ignore', handle: 'reviewbot' });
    expect(parseThreadCommand('@verdict learn Use the logger.\n\nNever console.log in src/.')).toEqual({
      kind: 'thread_command',
      verb: 'learn',
      handle: 'verdict',
      text: 'Use the logger.\n\nNever console.log in src/.',
    });
    expect(parseThreadCommand('@verdict learn:   spaced  ')).toMatchObject({ verb: 'learn', text: 'spaced' });
    // Without text: the handler answers how to use it.
    expect(parseThreadCommand('@verdict learn')).toMatchObject({ verb: 'learn', text: '' });
  });

  test('anything else is no command: top-level verbs, other handles, a handle mid-text', () => {
    for (const body of [
      '@verdict review',
      '@verdict help',
      '@verdictbot ignore',
      'please @verdict ignore',
      '> @verdict ignore',
      '@verdict ignored',
      '@verdict',
      '',
    ]) {
      expect([body, parseThreadCommand(body)]).toEqual([body, { kind: 'no_command' }]);
    }
    expect(parseThreadCommand(null)).toEqual({ kind: 'no_command' });
    expect(parseThreadCommand('@bot ignore', ['bot'])).toMatchObject({ verb: 'ignore', handle: 'bot' });
  });

  test('top-level comment commands are unchanged: ignore and learn stay no_command there', () => {
    expect(parseCommand('@verdict ignore')).toEqual({ kind: 'no_command' });
    expect(parseCommand('@verdict learn a rule')).toEqual({ kind: 'no_command' });
    expect(parseCommand('@verdict review')).toMatchObject({ kind: 'command', verb: 'review' });
  });
});

describe('the event filter on the feedback events (@octokit/webhooks-examples)', () => {
  test('a reply in a thread is a thread_reply with its identity', () => {
    const payload = reply('@verdict ignore');
    expect(classifyEvent('pull_request_review_comment', payload)).toEqual({
      action: 'thread_reply',
      reply: {
        owner: 'Codertocat',
        repo: 'Hello-World',
        number: 2,
        commentId: 284312630,
        inReplyTo: 700,
        body: '@verdict ignore',
        author: 'Codertocat',
        association: 'OWNER',
        path: 'README.md',
        installationId: 1,
      },
    });
  });

  test('a first comment is not a reply; other actions are unsupported; a bot is not a person', () => {
    const first = example('pull_request_review_comment', 'created');
    expect(classifyEvent('pull_request_review_comment', first)).toEqual({
      action: 'ignore',
      reason: 'not_thread_reply',
    });
    for (const action of ['edited', 'deleted']) {
      const payload = example('pull_request_review_comment', action);
      payload.comment.in_reply_to_id = 700;
      expect(classifyEvent('pull_request_review_comment', payload)).toEqual({
        action: 'ignore',
        reason: 'unsupported_action',
      });
    }
    const bot = reply('@verdict ignore');
    bot.comment.user.type = 'Bot';
    expect(classifyEvent('pull_request_review_comment', bot)).toEqual({
      action: 'ignore',
      reason: 'bot_sender',
    });
    const anonymous = reply('@verdict ignore');
    delete anonymous.comment.user;
    expect(classifyEvent('pull_request_review_comment', anonymous)).toEqual({
      action: 'ignore',
      reason: 'missing_identity',
    });
  });

  test('a resolved thread carries its node id, comment ids, whether it is outdated and the head', () => {
    const payload = example('pull_request_review_thread', 'resolved');
    expect(classifyEvent('pull_request_review_thread', payload)).toEqual({
      action: 'thread_resolved',
      thread: {
        owner: 'octo-org',
        repo: 'octo-repo',
        number: 118,
        nodeId: 'PRRT_kwDOEL39TM4w7XDQ',
        commentIds: [820867280],
        outdated: false,
        headSha: payload.pull_request.head.sha,
        sender: 'octocat',
        installationId: null,
      },
    });
    // GitHub no longer places the comment on the diff: its lines changed.
    payload.thread.comments[0].line = null;
    payload.thread.comments[0].position = null;
    expect(classifyEvent('pull_request_review_thread', payload)).toMatchObject({
      thread: { outdated: true },
    });
  });

  test('unresolved is unsupported; a bot resolving (Verdict itself) is bot_sender', () => {
    const unresolved = example('pull_request_review_thread', 'unresolved');
    expect(classifyEvent('pull_request_review_thread', unresolved)).toEqual({
      action: 'ignore',
      reason: 'unsupported_action',
    });
    const byBot = example('pull_request_review_thread', 'resolved');
    byBot.sender.type = 'Bot';
    expect(classifyEvent('pull_request_review_thread', byBot)).toEqual({
      action: 'ignore',
      reason: 'bot_sender',
    });
    const empty = example('pull_request_review_thread', 'resolved');
    empty.thread.comments = [];
    expect(classifyEvent('pull_request_review_thread', empty)).toEqual({
      action: 'ignore',
      reason: 'missing_identity',
    });
  });

  test('ingress: only ignore/learn replies and resolutions by people are stored and enqueued', () => {
    const handles = ['verdict'];
    expect(classifyDelivery('pull_request_review_comment', reply('@verdict ignore'), handles)).toMatchObject({
      actionable: true,
      outcome: 'enqueued',
      repo: 'Codertocat/Hello-World',
      prNumber: 2,
    });
    expect(
      classifyDelivery('pull_request_review_comment', reply('@verdict learn x'), handles).actionable,
    ).toBe(true);
    expect(classifyDelivery('pull_request_review_comment', reply('thanks!'), handles)).toMatchObject({
      actionable: false,
      outcome: 'no_command',
    });
    expect(classifyDelivery('pull_request_review_comment', reply('@verdict review'), handles)).toMatchObject({
      actionable: false,
      outcome: 'no_command',
    });
    const first = example('pull_request_review_comment', 'created');
    expect(classifyDelivery('pull_request_review_comment', first, handles)).toMatchObject({
      actionable: false,
      outcome: 'not_thread_reply',
    });
    const resolved = example('pull_request_review_thread', 'resolved');
    expect(classifyDelivery('pull_request_review_thread', resolved, handles)).toMatchObject({
      actionable: true,
      outcome: 'enqueued',
      prNumber: 118,
    });
    const unresolved = example('pull_request_review_thread', 'unresolved');
    expect(classifyDelivery('pull_request_review_thread', unresolved, handles).actionable).toBe(false);
  });
});

describe('the App subscribes to the feedback events', () => {
  test('app.yml and the manifest of first-run registration list them', () => {
    const yml = readAppYml();
    expect(yml.default_events).toEqual(
      expect.arrayContaining(['pull_request_review_comment', 'pull_request_review_thread']),
    );
    expect(buildManifest(yml, 'https://verdict.example').default_events).toEqual(
      expect.arrayContaining(['pull_request_review_comment', 'pull_request_review_thread']),
    );
  });
});

describe('learn helpers', () => {
  test('pathGlob: the path, with characters a glob may not hold as ?', () => {
    expect(pathGlob('src/cache.ts')).toBe('src/cache.ts');
    expect(pathGlob('src/[id]/page+x.tsx')).toBe('src/?id?/page?x.tsx');
    expect(pathGlob('docs/what?.md')).toBe('docs/what?.md');
    expect(pathGlob('a*b')).toBe('a?b');
    expect(pathGlob('')).toBeNull();
    expect(pathGlob('a//b')).toBeNull();
    expect(pathGlob('x'.repeat(501))).toBeNull();
  });

  test('learnedContextId: a context id derived from the reply, the same each time', () => {
    expect(learnedContextId(42)).toMatch(/^mem_[0-9a-f]{24}$/);
    expect(learnedContextId(42)).toBe(learnedContextId(42));
    expect(learnedContextId(43)).not.toBe(learnedContextId(42));
  });
});

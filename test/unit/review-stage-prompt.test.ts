import type { PullRequestFacts } from '../../src/review/gather.js';
import { promptStage, type PromptInput } from '../../src/review/prompt.stage.js';
import { chunkPrompt } from '../../src/review/prompt.js';
import { HEAD, changedFile, runScope } from '../helpers/stages.js';

/** Stage `prompt`: the system prompt and the context every part's message carries, from what was read. */

const PR: PullRequestFacts = {
  number: 7,
  state: 'open',
  title: 'Evict expired entries',
  body: 'Fixes the cache.',
  author: 'marty',
  draft: false,
  baseRef: 'main',
  baseSha: 'b'.repeat(40),
  headRef: 'evict',
  headSha: HEAD,
  defaultBranch: 'main',
  labels: ['cache'],
  changedFiles: 2,
};

function input(over: Partial<PromptInput> = {}): PromptInput {
  return {
    run: runScope(),
    pr: PR,
    policy: { customInstructions: 'Mind the cache invariants.' },
    gathered: {
      paths: ['src/cache.ts', 'src/store.ts'],
      prior: [],
      memory: [
        {
          id: 'mem-1',
          repo: 'acme/web',
          paths: ['src/**'],
          title: 'Cache rules',
          body: 'No TTL.',
          enabled: true,
          source: 'operator',
          revision: 1,
          createdAt: 1,
          updatedAt: 1,
          createdBy: 'test',
        },
      ],
      competitors: [
        {
          id: 1,
          repo: 'acme/web',
          prNumber: 7,
          login: 'coderabbitai[bot]',
          kind: 'review',
          githubId: 11,
          state: 'COMMENTED',
          body: 'Looks fine.',
          submittedAt: null,
          createdAt: 1,
        },
      ],
      instructions: {
        files: [{ path: 'AGENTS.md', appliesTo: 'every file', text: 'Use strict mode.' }],
        notes: [],
      },
    },
    plan: { review: { kind: 'full', reason: 'first review of this pull request', sinceSha: null } },
    validationEvidence: null,
    ...over,
  };
}

describe('stage prompt', () => {
  test('a first review: the PR facts, memory by id, instructions, other bots and the custom instructions', async () => {
    const { system, context } = await promptStage.run(input());
    expect(system).toContain('Mind the cache invariants.');
    expect(context).toMatchObject({
      repo: 'acme/web',
      number: 7,
      title: 'Evict expired entries',
      body: 'Fixes the cache.',
      author: 'marty',
      baseRef: 'main',
      headRef: 'evict',
      headSha: HEAD,
      labels: ['cache'],
      incremental: null,
      fullReviewNote: null,
      allPaths: ['src/cache.ts', 'src/store.ts'],
      validation: null,
    });
    // Only what the prompt shows of a memory context and of another bot's review.
    expect(context.memory).toEqual([{ id: 'mem-1', title: 'Cache rules', body: 'No TTL.' }]);
    expect(context.competitors).toEqual([
      { login: 'coderabbitai[bot]', kind: 'review', state: 'COMMENTED', body: 'Looks fine.' },
    ]);
    expect(context.instructions).toEqual([
      { path: 'AGENTS.md', appliesTo: 'every file', text: 'Use strict mode.' },
    ]);
    // The context is what prompt.ts renders into each part's message.
    const message = chunkPrompt(context, { index: 0, files: [], tokens: 0 }, 1);
    expect(message).toContain('id `mem-1`: Cache rules');
    expect(message).toContain('### AGENTS.md (applies to every file)');
  });

  test('an incremental review says since when; a full review after an earlier one says why', async () => {
    const files = [changedFile('src/cache.ts')];
    const since = 'a'.repeat(40);
    const incremental = await promptStage.run(
      input({
        plan: { review: { kind: 'incremental', reason: '1 file(s) changed', sinceSha: since, files } },
      }),
    );
    expect(incremental.context.incremental).toEqual({ sinceSha: since, files: 1 });
    expect(incremental.context.fullReviewNote).toBeNull();
    const full = await promptStage.run(
      input({ plan: { review: { kind: 'full', reason: 'the branch was force-pushed', sinceSha: since } } }),
    );
    expect(full.context.incremental).toBeNull();
    expect(full.context.fullReviewNote).toBe(
      `This pull request was reviewed before, at ${since.slice(0, 12)}; this is a full review because the branch was force-pushed.`,
    );
  });

  test("the validation's evidence, when it came in time, and the counts of the span", async () => {
    const i = input({ validationEvidence: 'Verdict ran the checks: npm test passed.' });
    const out = await promptStage.run(i);
    expect(out.context.validation).toBe('Verdict ran the checks: npm test passed.');
    expect(promptStage.counts(out, i)).toEqual({
      systemChars: out.system.length,
      memoryContexts: 1,
      priorFindings: 0,
      instructionFiles: 1,
      competitorReviews: 1,
      validationEvidence: true,
      incremental: false,
    });
  });
});

import { DEFAULT_REPO_CONFIG, resolveRepoConfig } from '../../src/repo-config/schema.js';
import { defaultReviewPolicy, type ReviewPolicy } from '../../src/policy/policy.schema.js';
import { admit, type AdmissionInput, type BudgetUsage } from '../../src/review/admission.js';

function input(over: {
  trigger?: string;
  pr?: Partial<AdmissionInput['pr']>;
  repo?: Partial<AdmissionInput['repo']>;
  policy?: Partial<ReviewPolicy>;
  budget?: BudgetUsage | (() => Promise<BudgetUsage>);
}): AdmissionInput {
  const budget = over.budget;
  return {
    trigger: over.trigger ?? 'opened',
    pr: {
      author: 'alice',
      draft: false,
      baseRef: 'main',
      headRef: 'feature',
      title: 'Add caching',
      body: 'Adds a cache.',
      labels: [],
      changedFiles: 3,
      paths: ['src/cache.ts'],
      ...over.pr,
    },
    repo: {
      fullName: 'acme/web',
      operatorEnabled: true,
      standalone: DEFAULT_REPO_CONFIG,
      hasPriorReview: true,
      ...over.repo,
    },
    policy: { ...defaultReviewPolicy(), ...over.policy },
    budget: typeof budget === 'function' ? budget : async () => budget ?? { known: true, costUsd: 0 },
  };
}

// A PR comment command, an operator requeue, and `verdict review` of a local change.
const MANUAL = ['manual_command', 'operator_requeue', 'local_review'];

describe('admission (review-engine 7.2)', () => {
  it('admits an ordinary pull request', async () => {
    expect(await admit(input({}))).toEqual({ admitted: true, notes: [] });
  });

  describe('repository_disabled', () => {
    it('refuses a repository its operator configuration disables, even for manual commands', async () => {
      for (const trigger of ['opened', ...MANUAL]) {
        const d = await admit(input({ trigger, repo: { operatorEnabled: false } }));
        expect(d).toMatchObject({ admitted: false, reason: 'repository_disabled' });
      }
    });
    it('refuses a repository with no configuration and no prior review while autoEnableNewRepos is off', async () => {
      const d = await admit(input({ repo: { operatorEnabled: null, hasPriorReview: false } }));
      expect(d).toMatchObject({ admitted: false, reason: 'repository_disabled' });
    });
    it('admits it when it was reviewed before, or when autoEnableNewRepos is on', async () => {
      expect((await admit(input({ repo: { operatorEnabled: null, hasPriorReview: true } }))).admitted).toBe(
        true,
      );
      expect(
        (
          await admit(
            input({
              repo: { operatorEnabled: null, hasPriorReview: false },
              policy: { autoEnableNewRepos: true },
            }),
          )
        ).admitted,
      ).toBe(true);
    });
  });

  describe('auto_review_disabled (standalone config, automatic reviews only)', () => {
    it('refuses a base branch outside branches.include', async () => {
      const d = await admit(input({ pr: { baseRef: 'release/1.0' } }));
      expect(d).toMatchObject({ admitted: false, reason: 'auto_review_disabled' });
      expect((d as { detail: string }).detail).toContain('release/1.0');
    });
    it('refuses when review.auto is false or a draft without review.onDraft', async () => {
      const noAuto = resolveRepoConfig({ review: { auto: false } }).config;
      expect(await admit(input({ repo: { standalone: noAuto } }))).toMatchObject({
        reason: 'auto_review_disabled',
      });
      const d = await admit(input({ pr: { draft: true }, policy: { reviewDrafts: true } }));
      expect(d).toMatchObject({ reason: 'auto_review_disabled' });
    });
    it("admits the repository's default branch without configuration (NAMES.md)", async () => {
      expect(await admit(input({ pr: { baseRef: 'master', defaultBranch: 'master' } }))).toEqual({
        admitted: true,
        notes: [],
      });
      expect(await admit(input({ pr: { baseRef: 'master', defaultBranch: 'main' } }))).toMatchObject({
        reason: 'auto_review_disabled',
      });
    });
    it("follows the operator configuration's branches over the file's", async () => {
      const file = resolveRepoConfig({ branches: { include: ['main'] } }).config;
      const repo = { standalone: file, operatorBranches: { include: ['master'] } };
      expect((await admit(input({ pr: { baseRef: 'master' }, repo }))).admitted).toBe(true);
      expect(await admit(input({ pr: { baseRef: 'main' }, repo }))).toMatchObject({
        reason: 'auto_review_disabled',
      });
    });
    it('does not apply to manual commands', async () => {
      for (const trigger of MANUAL) {
        expect((await admit(input({ trigger, pr: { baseRef: 'release/1.0' } }))).admitted).toBe(true);
      }
    });
  });

  it('author_paused: case-insensitive, and manual commands do not bypass it', async () => {
    for (const trigger of ['opened', ...MANUAL]) {
      const d = await admit(
        input({ trigger, pr: { author: 'Alice' }, policy: { pausedAuthors: ['alice'] } }),
      );
      expect(d).toMatchObject({ admitted: false, reason: 'author_paused' });
    }
  });

  it('new_commits_disabled only for synchronize', async () => {
    const policy = { autoReviewNewCommits: false };
    expect(await admit(input({ trigger: 'synchronize', policy }))).toMatchObject({
      reason: 'new_commits_disabled',
    });
    expect((await admit(input({ trigger: 'opened', policy }))).admitted).toBe(true);
  });

  describe('draft, file count and filters: refused automatically, bypassed by manual commands', () => {
    const draftRepo = resolveRepoConfig({ review: { onDraft: true } }).config;
    const cases: Array<[string, Parameters<typeof input>[0]]> = [
      ['draft_review_disabled', { pr: { draft: true }, repo: { standalone: draftRepo } }],
      ['file_change_limit', { pr: { changedFiles: 501 }, policy: { fileChangeLimit: 500 } }],
      [
        'filters_not_matched',
        {
          policy: {
            filters: [{ conditions: [{ field: 'label', operator: 'is', values: ['review-me'] }] }],
          } as Partial<ReviewPolicy>,
          pr: { labels: ['other'] },
        },
      ],
    ];
    for (const [reason, over] of cases) {
      it(`${reason}`, async () => {
        expect(await admit(input(over))).toMatchObject({ admitted: false, reason });
        for (const trigger of MANUAL) expect((await admit(input({ ...over, trigger }))).admitted).toBe(true);
      });
    }
    it('a file count at the limit is admitted', async () => {
      expect(
        (await admit(input({ pr: { changedFiles: 500 }, policy: { fileChangeLimit: 500 } }))).admitted,
      ).toBe(true);
    });
    it('a filter that needs missing metadata defers: admitted with a note, not denied', async () => {
      const d = await admit(
        input({
          pr: { labels: null },
          policy: {
            filters: [{ conditions: [{ field: 'label', operator: 'is', values: ['review-me'] }] }],
          } as Partial<ReviewPolicy>,
        }),
      );
      expect(d.admitted).toBe(true);
      expect((d as { notes: string[] }).notes.join(' ')).toMatch(/deferred/);
    });
  });

  describe('monthly budget', () => {
    it('is not read without a budget', async () => {
      let calls = 0;
      const budget = async (): Promise<BudgetUsage> => {
        calls++;
        return { known: false, why: 'x' };
      };
      expect((await admit(input({ budget }))).admitted).toBe(true);
      expect(calls).toBe(0);
    });
    it('refuses at or above the cap, admits below', async () => {
      const policy = { monthlyModelBudgetUsd: 10 };
      expect(await admit(input({ policy, budget: { known: true, costUsd: 10 } }))).toMatchObject({
        reason: 'monthly_model_budget_reached',
      });
      expect(await admit(input({ policy, budget: { known: true, costUsd: 12.5 } }))).toMatchObject({
        reason: 'monthly_model_budget_reached',
      });
      expect((await admit(input({ policy, budget: { known: true, costUsd: 9.99 } }))).admitted).toBe(true);
    });
    it('refuses when usage is unknown, and manual commands do not bypass the budget', async () => {
      for (const trigger of ['opened', ...MANUAL]) {
        const d = await admit(
          input({
            trigger,
            policy: { monthlyModelBudgetUsd: 10 },
            budget: { known: false, why: 'no telemetry' },
          }),
        );
        expect(d).toMatchObject({ admitted: false, reason: 'model_budget_usage_unavailable' });
        expect((d as { detail: string }).detail).toContain('no telemetry');
      }
    });
  });
});

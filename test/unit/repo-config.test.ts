import {
  autoReviewDecision,
  baseBranchIncluded,
  configErrorFingerprint,
  DEFAULT_REPO_CONFIG,
  resolveRepoConfig,
} from '../../src/commands/repo-config.js';

describe('standalone repository config (.github/verdict.yml)', () => {
  test('defaults of review-engine 2.7', () => {
    expect(DEFAULT_REPO_CONFIG).toEqual({
      enabled: true,
      review: { auto: true, onDraft: false },
      branches: { include: ['main', 'dev'], exclude: [] },
      manual: { enabled: true, allowAssociations: ['OWNER', 'MEMBER', 'COLLABORATOR'], allowUsers: [] },
    });
    expect(resolveRepoConfig(null)).toEqual({ config: DEFAULT_REPO_CONFIG, error: null });
  });

  test('a partial file keeps the other defaults', () => {
    const { config, error } = resolveRepoConfig({
      review: { onDraft: true },
      branches: { include: ['master'] },
    });
    expect(error).toBeNull();
    expect(config.review).toEqual({ auto: true, onDraft: true });
    expect(config.branches.include).toEqual(['master']);
    expect(config.manual.enabled).toBe(true);
  });

  test.each([
    [{ review: { auto: 'sometimes' } }, 'review.auto'],
    [{ reviews: {} }, 'reviews'],
    [{ manual: { allowUsers: 'me' } }, 'manual.allowUsers'],
    [{ branches: { include: ['main'], only: ['x'] } }, 'only'],
  ])('an invalid file gives the defaults and an error naming the path (%j)', (raw, path) => {
    const result = resolveRepoConfig(raw);
    expect(result.config).toEqual(DEFAULT_REPO_CONFIG);
    expect(result.error).toContain(path);
  });

  test('base branch must be included and not excluded; globs work', () => {
    expect(baseBranchIncluded(DEFAULT_REPO_CONFIG, 'main')).toBe(true);
    expect(baseBranchIncluded(DEFAULT_REPO_CONFIG, 'master')).toBe(false);
    const { config } = resolveRepoConfig({ branches: { include: ['release/*'], exclude: ['release/old'] } });
    expect(baseBranchIncluded(config, 'release/1.2')).toBe(true);
    expect(baseBranchIncluded(config, 'release/old')).toBe(false);
    expect(baseBranchIncluded(config, 'release/a/b')).toBe(false);
  });

  test.each([
    [{ enabled: false }, { baseRef: 'main', draft: false }, 'repository disabled'],
    [{ review: { auto: false } }, { baseRef: 'main', draft: false }, 'review.auto'],
    [{}, { baseRef: 'feature', draft: false }, 'branches.include'],
    [{}, { baseRef: 'main', draft: true }, 'review.onDraft'],
  ])('auto review refused by %j for %j', (raw, pr, detail) => {
    const decision = autoReviewDecision(resolveRepoConfig(raw).config, pr);
    expect(decision.ok).toBe(false);
    if (!decision.ok) {
      expect(decision.reason).toBe('auto_review_disabled');
      expect(decision.detail).toContain(detail);
    }
  });

  test('auto review allowed on an included base, and on drafts with review.onDraft', () => {
    expect(autoReviewDecision(DEFAULT_REPO_CONFIG, { baseRef: 'dev', draft: false })).toEqual({ ok: true });
    const { config } = resolveRepoConfig({ review: { onDraft: true } });
    expect(autoReviewDecision(config, { baseRef: 'main', draft: true })).toEqual({ ok: true });
  });

  test('config error fingerprints are stable per message', () => {
    expect(configErrorFingerprint('a')).toBe(configErrorFingerprint('a'));
    expect(configErrorFingerprint('a')).not.toBe(configErrorFingerprint('b'));
  });
});

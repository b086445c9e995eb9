import nock from 'nock';
import {
  OPENAI,
  REPO,
  completion,
  github,
  isVerification,
  review,
  reviewHarness,
} from '../helpers/review-harness.js';

/**
 * Agreement across samples end to end (`review.samples: N` in `.github/verdict.yml`): N independent
 * passes of the review through the fake OpenAI model, the findings that recur in at least half of them
 * kept and verified, and the body saying how many samples agreed.
 */

const finding = (title: string, body: string, line: number) => ({
  severity: 'high',
  category: 'correctness',
  path: 'src/cache.ts',
  title,
  body,
  contextIds: [],
  line,
});
const RACE = finding('Eviction races with concurrent writes', 'evict() runs between get and set.', 2);
const RACE_AGAIN = finding(
  'Race between evict and concurrent set',
  'evict can run between get and set, losing the write.',
  1,
);
const NOISE = finding('Function name is unclear', 'Rename evict to something clearer.', 1);

describe('agreement across samples', () => {
  const h = reviewHarness();

  test('review.samples: 3 reviews three times; a finding two passes raised is kept, one raised once is not', async () => {
    const store = await h.start();
    await store.repositories.setStandaloneConfig(REPO, { review: { samples: 3 } });
    github();
    const answers = [[RACE, NOISE], [RACE_AGAIN], []];
    const seen: any[] = [];
    let answered = 0;
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => !isVerification(b) && (seen.push(b), true))
      .times(3)
      .reply(200, () => completion(JSON.stringify(review({ findings: answers[answered++] }))));
    const run = await h.reviewRun();
    expect(run.analysisStatus).toBe('analysed');
    expect(seen).toHaveLength(3);
    expect((await store.findings.listForRun(run.id)).map((f) => f.title)).toEqual([RACE.title]);
    const result = run.result as any;
    expect(result.samples).toEqual({
      count: 3,
      required: 2,
      candidates: 2,
      kept: 1,
      dropped: 1,
      agreement: [{ path: 'src/cache.ts', title: RACE.title, samples: 2 }],
    });
    // Only what the samples agreed on is verified.
    expect(h.verifications).toHaveLength(1);
    expect(result.verification).toMatchObject({ candidates: 1, published: 1 });
    const { spans } = await h.spansOf(run);
    expect(
      spans
        .filter((s) => s.name === 'model')
        .map((s) => s.attributes.sample)
        .sort(),
    ).toEqual([1, 2, 3]);
    expect(spans.find((s) => s.name === 'stage:call')!.attributes).toMatchObject({
      samples: 3,
      samplesKept: 1,
      samplesDropped: 1,
    });
    const body = (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!.body!;
    expect(body).toContain(
      '_Reviewed in 3 independent samples: 1 finding recurred in at least 2 of them and was kept; 1 seen in fewer was dropped._',
    );
  });

  test('one sample by default: one call, and the body says nothing about samples', async () => {
    const store = await h.start();
    github();
    const seen: any[] = [];
    nock(OPENAI)
      .post('/v1/chat/completions', (b) => !isVerification(b) && (seen.push(b), true))
      .reply(200, completion(JSON.stringify(review())));
    const run = await h.reviewRun();
    expect(seen).toHaveLength(1);
    expect((run.result as any).samples).toBeUndefined();
    const body = (await store.publications.listForPr(REPO, 7)).find((p) => p.kind === 'review')!.body!;
    expect(body).not.toContain('independent samples');
  });
});

import { createVerdictClient } from '../../src/trpc/client.js';
import { startVerdict, type RunningVerdict } from '../helpers/verdict.js';
import { callApi, TOKENS } from '../helpers/operator.js';

/** `GET /operator/api/test-lab` and `/test-lab/:id` (and the tRPC facade) with corpus runs and harness records. */
describe('Test Lab routes', () => {
  let app: RunningVerdict;
  beforeAll(async () => {
    app = await startVerdict(TOKENS);
  });
  afterAll(() => app.stop());

  const get = (path: string, token = 'read-secret') => callApi(app.baseUrl, 'GET', path, token);

  test('corpus runs are listed with their scores, newest first, and shown with every case', async () => {
    const { store } = app.verdict;
    const cases = [
      {
        name: 'go-x',
        clean: false,
        bugs: [{ id: 'race', finding: 0, matchedBy: 'anchor' }],
        findings: [{ severity: 'high', path: 'a.go', line: 3, caught: 'race' }],
      },
    ];
    const harness = await store.harness.save({
      id: 'harness_a',
      name: 'baseline',
      reviewKey: 'acme/web#1@' + 'a'.repeat(40),
      runId: 'run_1',
      repo: 'acme/web',
      prNumber: 1,
      actor: 'cli:test',
      record: { verdict: 'clear', findings: [] },
    });
    await new Promise((r) => setTimeout(r, 5)); // a later createdAt on the system clock
    const corpus = await store.testLab.save({
      id: 'tl_1',
      name: 'nightly',
      provider: 'openai',
      model: 'gpt-5',
      promptVersion: '0123456789ab',
      commit: 'f'.repeat(40),
      judge: null,
      scores: { recall: 0.84, precision: 0.82, caught: 27, bugs: 32 },
      cases,
      actor: 'cli:test',
    });
    const list = await get('/operator/api/test-lab');
    expect(list.status).toBe(200);
    expect(list.body.runs.map((r: any) => [r.kind, r.id])).toEqual([
      ['corpus', 'tl_1'],
      ['harness', 'harness_a'],
    ]);
    expect(list.body.runs[0]).toMatchObject({
      provider: 'openai',
      model: 'gpt-5',
      scores: { recall: 0.84 },
      caseCount: 1,
    });
    expect(list.body.runs[0]).not.toHaveProperty('cases');
    const one = await get('/operator/api/test-lab/tl_1');
    expect(one.body).toEqual({ ok: true, run: { kind: 'corpus', ...corpus } });
    expect((await get('/operator/api/test-lab/harness_a')).body.run).toEqual({ kind: 'harness', ...harness });
    expect((await get('/operator/api/test-lab/tl_nope')).status).toBe(404);
    expect((await get('/operator/api/test-lab', 'admin-secret')).status).toBe(401);

    const trpc = createVerdictClient({ baseUrl: app.baseUrl, token: 'read-secret' });
    expect((await trpc.testLab.list.query({})).runs).toEqual(list.body.runs);
    expect(await trpc.testLab.get.query({ id: 'tl_1' })).toEqual({ run: one.body.run });
  });
});

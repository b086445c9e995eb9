import pino from 'pino';
import { PublicationLedger, type Attempt } from '../../src/publish/ledger.js';
import { openTestStore, type TestStore } from '../helpers/store.js';

/** The ledger's `lookFirst` (ledger.ts): a step with no attempt on record looks on GitHub before sending. */
describe('PublicationLedger lookFirst', () => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore('sqlite');
  });
  afterEach(() => t.cleanup());

  const attempt: Attempt = {
    runId: 'run_1',
    repo: 'acme/web',
    prNumber: 7,
    kind: 'review',
    body: 'b',
    step: 'review',
  };
  const log = pino({ level: 'silent' });

  function ledger(lookFirst: boolean) {
    return new PublicationLedger(t.store.publications, 'live', log, { lookFirst });
  }

  it('records what GitHub holds instead of sending', async () => {
    const calls: string[] = [];
    const sent = await ledger(true).send(attempt, async () => (calls.push('post'), { data: { id: 2 } }), {
      find: async () => (calls.push('find'), { id: '1' }),
    });
    expect(calls).toEqual(['find']);
    expect(sent).toMatchObject({ ok: true, id: '1', reused: 'found' });
    expect(await t.store.publications.lastOfStep({ ...attempt, step: 'review' })).toMatchObject({
      status: 'published',
      receipt: '1',
    });
  });

  it('sends on the same row when GitHub holds nothing', async () => {
    const calls: string[] = [];
    const sent = await ledger(true).send(attempt, async () => (calls.push('post'), { data: { id: 2 } }), {
      find: async () => (calls.push('find'), null),
    });
    expect(calls).toEqual(['find', 'post']);
    expect(sent).toMatchObject({ ok: true, id: '2', reused: null });
    const rows = await t.store.db.knex('publications').select('status', 'receipt');
    expect(rows).toEqual([{ status: 'published', receipt: '2' }]);
  });

  it('without it, a first attempt sends without looking', async () => {
    const calls: string[] = [];
    await ledger(false).send(attempt, async () => (calls.push('post'), { data: { id: 2 } }), {
      find: async () => (calls.push('find'), { id: '1' }),
    });
    expect(calls).toEqual(['post']);
  });
});

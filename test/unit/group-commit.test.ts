import { GroupCommitter } from '../../src/ingress/group-commit.js';

describe('GroupCommitter', () => {
  test('items submitted together are committed in one batch, each with its own result', async () => {
    const batches: number[][] = [];
    const committer = new GroupCommitter<number, string>(async (items) => {
      batches.push(items);
      return items.map((n) => `r${n}`);
    });
    const results = await Promise.all([1, 2, 3].map((n) => committer.submit(n)));
    expect(results).toEqual(['r1', 'r2', 'r3']);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  test('poll runs on every submit, and a commit it settles answers before the event loop turns', async () => {
    const finish: Array<() => void> = [];
    const committer = new GroupCommitter<number, number>(
      (items) => new Promise<number[]>((resolve) => finish.push(() => resolve(items))),
      { maxBatch: 10, maxInFlight: 1, poll: () => finish.shift()?.() },
    );
    const first = committer.submit(1);
    await new Promise((r) => setImmediate(r));
    expect(finish).toHaveLength(1); // the first batch is in flight
    let answered = false;
    void first.then(() => {
      answered = true;
    });
    void committer.submit(2); // its poll settles the first batch
    await Promise.resolve();
    await Promise.resolve();
    expect(answered).toBe(true);
  });
});

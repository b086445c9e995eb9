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

  test('with maxInFlight 2 a second batch starts while the first is in flight; a third waits for one of them', async () => {
    const batches: number[][] = [];
    const finish: Array<() => void> = [];
    const committer = new GroupCommitter<number, number>(
      (items) =>
        new Promise<number[]>((resolve) => {
          batches.push(items);
          finish.push(() => resolve(items.map((n) => n * 10)));
        }),
      { maxBatch: 10, maxInFlight: 2 },
    );
    const turn = () => new Promise((r) => setImmediate(r));
    const first = committer.submit(1);
    await turn();
    const second = [committer.submit(2), committer.submit(3)];
    await turn();
    expect(batches).toEqual([[1], [2, 3]]); // both in flight
    const third = committer.submit(4);
    await turn();
    expect(batches).toHaveLength(2); // the third waits
    finish.shift()!();
    expect(await first).toBe(10);
    await turn();
    expect(batches).toEqual([[1], [2, 3], [4]]);
    finish.shift()!();
    finish.shift()!();
    expect(await Promise.all([...second, third])).toEqual([20, 30, 40]);
  });
});

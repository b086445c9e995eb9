import { SqliteThread } from '../../src/store/sqlite-thread.js';

const SCRIPT = new URL('../helpers/answer-then-exit-thread.mjs', import.meta.url);

/** Blocks this thread (and its event loop) for `ms`, so that what the other thread does meanwhile queues up. */
function block(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('SqliteThread', () => {
  test('answers a request by its id', async () => {
    const thread = await SqliteThread.open(SCRIPT, {}, 'test thread');
    await expect(thread.request({ value: 7 })).resolves.toMatchObject({ value: 7 });
    await thread.worker.terminate();
  });

  test('a thread that stops after answering: the answer it sent still settles its request, the rest fail', async () => {
    for (let round = 0; round < 10; round++) {
      const thread = await SqliteThread.open(SCRIPT, {}, 'test thread');
      const answered = thread.request({ value: round, exit: true });
      const unanswered = thread.request({ value: -1 });
      const settled = Promise.allSettled([answered, unanswered]);
      // The thread answers the first request and exits while this loop is held: its answer and its
      // exit are both waiting when the loop turns.
      block(100);
      const [first, second] = await settled;
      expect(first).toEqual({ status: 'fulfilled', value: expect.objectContaining({ value: round }) });
      expect(second).toMatchObject({
        status: 'rejected',
        reason: { message: expect.stringMatching(/stopped \(exit code 3\)/) },
      });
      expect(thread.alive).toBe(false);
      await expect(thread.request({ value: 1 })).rejects.toThrow(/has stopped/);
    }
  });
});

import { intakeCell, intakeHold } from '../../src/worker/intake-hold.js';

/** The inline worker thread's hold on claiming while webhooks come in (issue 37 item 2). */
describe('intakeHold', () => {
  test('holds while intake is busy, for what is left of the quiet period', () => {
    let now = 10_000;
    let last = 0;
    const hold = intakeHold(
      () => last,
      () => now,
      { quietMs: 100, maxHoldMs: 1000 },
    );
    expect(hold()).toBe(0); // no webhook yet
    last = now - 30;
    expect(hold()).toBe(70);
    now += 70;
    expect(hold()).toBe(0); // quiet for 100 ms
  });

  test('claims at least once every maxHoldMs under unbroken traffic, then holds again', () => {
    let now = 0;
    const hold = intakeHold(
      () => now,
      () => now,
      { quietMs: 100, maxHoldMs: 1000 },
    );
    const answers: number[] = [];
    for (let t = 0; t <= 2100; t += 50) {
      now = t;
      answers.push(hold());
    }
    // Held at 0..950 ms, one claim at 1000 ms, held again, the next claim 1000 ms later.
    expect(answers.filter((a) => a === 0)).toHaveLength(2);
    expect(answers[20]).toBe(0);
    expect(answers[21]).toBe(100);
    expect(answers[40]).toBe(100);
    expect(answers[41]).toBe(0);
  });

  test('the shared cell is read at once by another reader of the same memory, without a message', () => {
    const cell = intakeCell();
    const view = new BigInt64Array(cell.buffer); // what the worker thread gets through workerData
    Atomics.store(cell, 0, BigInt(123_456));
    expect(Number(Atomics.load(view, 0))).toBe(123_456);
    expect(cell.buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});

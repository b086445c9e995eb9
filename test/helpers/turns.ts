/** One turn of the event loop: the promises and I/O callbacks ready now run first. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Waits until `check` holds, asking again after each turn of the event loop. No wall clock: a loaded
 * machine makes the wait slower, never wrong. For what moves in this process (a worker on a manual
 * clock, an in-memory queue) or a check that itself asks the store (each turn then waits for the
 * database's answer); not for waiting on another process, where turns would pass faster than it works.
 * A condition that never holds fails after `turns` turns.
 */
export async function untilTurns(
  check: () => boolean | Promise<boolean>,
  what = 'the condition',
  turns = 10_000,
): Promise<void> {
  for (let turn = 0; !(await check()); turn++) {
    if (turn >= turns) throw new Error(`${what} did not hold after ${turns} turns of the event loop`);
    await nextTurn();
  }
}

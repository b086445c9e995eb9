/**
 * Webhook intake first (the inline worker's thread, thread.ts): while the server thread is taking webhooks
 * in, the worker lanes hold off claiming, so their writes do not make intake wait for SQLite's write lock
 * and their CPU does not compete with it; they claim once intake has been quiet for `quietMs`, and at
 * least once every `maxHoldMs` whatever the traffic, so the work is never starved.
 *
 * `lastIntake` reads when intake last took a webhook in (ms since the epoch). The server thread writes it
 * to memory both threads share, so a thread busy with jobs reads it at once: a message would wait until
 * the thread's event loop came round to it.
 */
export function intakeHold(
  lastIntake: () => number,
  now: () => number = Date.now,
  { quietMs = 100, maxHoldMs = 1000 }: { quietMs?: number; maxHoldMs?: number } = {},
): () => number {
  let heldSince: number | null = null;
  return () => {
    const at = now();
    const wait = lastIntake() + quietMs - at;
    if (wait <= 0) {
      heldSince = null;
      return 0;
    }
    heldSince ??= at;
    if (at - heldSince >= maxHoldMs) {
      heldSince = null;
      return 0;
    }
    return wait;
  };
}

/** The shared cell `lastIntake` reads: written by the server thread (thread-host.ts), read by the thread. */
export function intakeCell(): BigInt64Array {
  return new BigInt64Array(new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT));
}

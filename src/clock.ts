import { randomBytes } from 'node:crypto';

/** Time and randomness are injected so tests can control them. */
export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };

/** A scheduled callback; `cancel()` stops it. */
export type Timer = { cancel(): void };

/**
 * The clock and the timers of a long-running loop (the queue worker's polls, lease renewals, reaps and
 * grace period; the scheduler's waits for each tick), injected so that a test can move time by hand
 * instead of sleeping.
 */
export type Timers = Clock & {
  /** Calls `fn` once, `ms` from now. `unref`: the timer does not keep the process alive. */
  after(ms: number, fn: () => void, opts?: { unref?: boolean }): Timer;
  /** Calls `fn` every `ms` until cancelled. */
  every(ms: number, fn: () => void): Timer;
};

export const systemTimers: Timers = {
  now: () => Date.now(),
  after(ms, fn, opts) {
    const handle = setTimeout(fn, ms);
    if (opts?.unref) handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
  every(ms, fn) {
    const handle = setInterval(fn, ms);
    return { cancel: () => clearInterval(handle) };
  },
};

type Scheduled = { id: number; at: number; period: number | null; fn: () => void };

/**
 * A clock that moves only when told: `advance(ms)` moves it forward and runs, in time order, every timer
 * that falls due on the way (a repeating one as often as it falls due). `set(ms)` moves it without
 * running timers.
 */
export class ManualClock implements Timers {
  private scheduled: Scheduled[] = [];
  private nextId = 1;

  constructor(private current = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.current;
  }

  set(ms: number): void {
    this.current = ms;
  }

  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.scheduled.filter((s) => s.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.current = Math.max(this.current, due.at);
      if (due.period === null) this.scheduled = this.scheduled.filter((s) => s !== due);
      else due.at += due.period;
      due.fn();
    }
    this.current = target;
  }

  /** Timers waiting to run. */
  get pendingTimers(): number {
    return this.scheduled.length;
  }

  after(ms: number, fn: () => void): Timer {
    return this.schedule(ms, null, fn);
  }

  every(ms: number, fn: () => void): Timer {
    return this.schedule(ms, Math.max(1, ms), fn);
  }

  private schedule(ms: number, period: number | null, fn: () => void): Timer {
    const entry: Scheduled = { id: this.nextId++, at: this.current + Math.max(0, ms), period, fn };
    this.scheduled.push(entry);
    return { cancel: () => (this.scheduled = this.scheduled.filter((s) => s !== entry)) };
  }
}

export type IdGenerator = (prefix: string) => string;
export const randomId: IdGenerator = (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`;

import { randomBytes } from 'node:crypto';

/** Time and randomness are injected so tests can control them. */
export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export type IdGenerator = (prefix: string) => string;
export const randomId: IdGenerator = (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`;

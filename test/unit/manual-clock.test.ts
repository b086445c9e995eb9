import { ManualClock, systemTimers } from '../../src/clock.js';

describe('ManualClock: time and timers that move only when the test moves them', () => {
  test('advance runs the timers that fall due, in time order, each at its own time', () => {
    const clock = new ManualClock(1000);
    const seen: Array<[string, number]> = [];
    clock.after(30, () => seen.push(['b', clock.now()]));
    clock.after(10, () => seen.push(['a', clock.now()]));
    clock.after(100, () => seen.push(['late', clock.now()]));
    clock.advance(50);
    expect(seen).toEqual([
      ['a', 1010],
      ['b', 1030],
    ]);
    expect(clock.now()).toBe(1050);
    expect(clock.pendingTimers).toBe(1);
  });

  test('a repeating timer runs as often as it falls due; cancel stops it; set moves time without running timers', () => {
    const clock = new ManualClock(0);
    let ticks = 0;
    const timer = clock.every(25, () => ticks++);
    clock.advance(100);
    expect(ticks).toBe(4);
    clock.set(1000);
    expect(ticks).toBe(4);
    timer.cancel();
    clock.advance(100);
    expect(ticks).toBe(4);
    expect(clock.pendingTimers).toBe(0);
  });

  test('a timer set by a running timer runs in the same advance when it falls due', () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    clock.after(10, () => clock.after(10, () => seen.push(clock.now())));
    clock.advance(30);
    expect(seen).toEqual([20]);
  });

  test('the system timers run on real time and can be cancelled', async () => {
    let fired = false;
    const cancelled = systemTimers.after(5, () => (fired = true));
    cancelled.cancel();
    await new Promise<void>((resolve) => systemTimers.after(20, resolve));
    expect(fired).toBe(false);
  });
});

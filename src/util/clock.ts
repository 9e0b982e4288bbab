// Injected time, so tests can hold the clock still or step it.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.parse('2026-01-01T00:00:00.000Z')) {}
  now(): number {
    return this.ms;
  }
  set(ms: number | string): void {
    this.ms = typeof ms === 'string' ? Date.parse(ms) : ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

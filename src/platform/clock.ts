/** Time source; tests pass a controllable clock to check expiries without waiting. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  constructor(private t = Date.now()) {}
  now() {
    return this.t;
  }
  advance(ms: number) {
    this.t += ms;
  }
  set(ms: number) {
    this.t = ms;
  }
}

export const DAY_MS = 86_400_000;

/** The calendar day (00:00 UTC, in epoch milliseconds) a moment falls on: how date-only columns are stored. */
export const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
